"""The course's checks by name, for the tests: `PS2.axis` is ps2_layer_norm's check of the cell
axis (a `CheckSpec`), `PS2.axis.grade_id` that cell's nbgrader id. A test names a check by its
object, never by a retyped grade_id (test_house.py counts those).
"""

from __future__ import annotations

from normlab.grading import CHECKS, Verdict, cell_verdict

PS1 = CHECKS["ps1_by_hand"].cell
PS2 = CHECKS["ps2_layer_norm"].cell
PS3 = CHECKS["ps3_axes"].cell
PS4 = CHECKS["ps4_rmsnorm"].cell
PS5 = CHECKS["ps5_backward"].cell
PS6 = CHECKS["ps6_stability_speed"].cell
PS7 = CHECKS["ps7_family"].cell
PS8 = CHECKS["ps8_in_a_model"].cell
PS9 = CHECKS["ps9_dyt"].cell


def grade_ids(specs) -> frozenset[str]:
    """The grade_ids of the checks `specs` (what a notebook and a gradebook name them by)."""
    return frozenset(spec.grade_id for spec in specs)


def verdict_of(spec, namespace: dict) -> Verdict:
    """The Verdict of `spec`'s cell at autograde for `namespace` (`cell_verdict`)."""
    return cell_verdict(spec.assignment, spec.grade_id, namespace)
