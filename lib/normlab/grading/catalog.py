"""The course's checks: every assignment's `CheckSpec`s by grade_id, in the course's order.

One module per assignment (`psN_<name>.py`) defines `ASSIGNMENT` (its id) and `CHECKS`
(its specs, `spec.registry(...)`); this module only lists them. A new assignment is one
more import and one more entry in `_COURSE`. In a student download each spec runs its
recorded visible battery instead of its generator (`recording`).
"""

from __future__ import annotations

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
from .recording import RECORDING
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
CHECKS: dict[str, dict[str, CheckSpec]] = {module.ASSIGNMENT: module.CHECKS for module in _COURSE}
if RECORDING is not None:  # a student download
    CHECKS = RECORDING.checks(CHECKS)
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
