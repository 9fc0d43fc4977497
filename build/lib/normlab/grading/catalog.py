"""The course's checks: every assignment's `CheckSpec`s by grade_id, in the course's order.

One module per assignment (`psN_<name>.py`) defines `ASSIGNMENT` (its id) and `CHECKS`
(its specs, `spec.registry(...)`); this module only lists them, and gives each spec its
battery (`recording.with_batteries`: the answer key's, or in a student download the recorded
visible one). A new assignment is one more import and one more entry in `_COURSE` (and its
batteries in `normlab.answer_key.batteries`).
"""

from __future__ import annotations

from dataclasses import replace

from . import (
    ps1_by_hand,
    ps2_layer_norm,
    ps3_axes,
    ps4_rmsnorm,
    ps5_backward,
    ps6_stability_speed,
    ps7_family,
    ps8_in_a_model,
)
from .recording import with_batteries
from .spec import CheckSpec

# the assignments' modules, in the course's order
_COURSE = (
    ps1_by_hand,
    ps2_layer_norm,
    ps3_axes,
    ps4_rmsnorm,
    ps5_backward,
    ps6_stability_speed,
    ps7_family,
    ps8_in_a_model,
)
CHECKS: dict[str, dict[str, CheckSpec]] = with_batteries(
    {
        module.ASSIGNMENT: {
            grade_id: replace(spec, assignment=module.ASSIGNMENT)
            for grade_id, spec in module.CHECKS.items()
        }
        for module in _COURSE
    }
)
# the assignment ids, in the course's order
ASSIGNMENTS: tuple[str, ...] = tuple(CHECKS)
# manually graded cells (no CheckSpec), grade_id -> points: the rubric is in the source notebook
MANUAL: dict[str, dict[str, float]] = {
    module.ASSIGNMENT: module.MANUAL for module in _COURSE if hasattr(module, "MANUAL")
}
# the assignments whose grading kernel imports the real torch, not the stand-in (the grader
# says so in the kernel's setup message): ps8 grades a torch module
REAL_TORCH: frozenset[str] = frozenset(
    module.ASSIGNMENT for module in _COURSE if getattr(module, "REAL_TORCH", False)
)
# the names the checks read from a notebook: every graded function (and value) of each set
GRADED: dict[str, tuple[str, ...]] = {
    a: tuple(dict.fromkeys(t for spec in specs.values() for t in spec.targets))
    for a, specs in CHECKS.items()
}


def cells_of(spec: CheckSpec) -> list[CheckSpec]:
    """The cells of `spec`'s assignment that check the same function(s), in the notebook's
    order, `spec` among them (alone, for a check of no assignment of the course's)."""
    specs = CHECKS.get(spec.assignment, {}).values()
    return [other for other in specs if other.targets == spec.targets] or [spec]


def reuse_cell(spec: CheckSpec) -> CheckSpec | None:
    """The reuse cell of `spec`'s function (None: it has none, or `spec` is it)."""
    found = [other for other in cells_of(spec) if other.voids]
    return found[0] if found and found[0].grade_id != spec.grade_id else None
