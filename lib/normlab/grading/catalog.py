"""The course's checks: every assignment's `CheckSpec`s by grade_id, in the course's order.

An assignment is a module of this package named `ps<N>_<name>.py` that defines `ASSIGNMENT`
(its id) and `CHECKS` (`spec.registry(ASSIGNMENT, ...)`); this module finds them, in the order
of N. A module of that name without `ASSIGNMENT` holds part of a larger set's cells (ps7's
`ps7_group_norm`). A new assignment is its module here, its batteries
(`normlab.answer_key.batteries`) and its notebooks: nothing to list.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from .spec import CheckSpec

_SET = re.compile(r"ps(\d+)_\w+$")


def _course() -> list:
    """The assignments' modules, in the course's order."""
    found = pkgutil.iter_modules(importlib.import_module(__package__).__path__)
    sets = sorted((int(match[1]), match[0]) for i in found if (match := _SET.match(i.name)))
    modules = (importlib.import_module(f"{__package__}.{name}") for _, name in sets)
    return [module for module in modules if hasattr(module, "ASSIGNMENT")]


_COURSE = _course()
CHECKS: dict[str, dict[str, CheckSpec]] = {module.ASSIGNMENT: module.CHECKS for module in _COURSE}
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
