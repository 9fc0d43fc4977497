"""`check(grade_id, *targets)`: what a test cell calls, in the student's kernel.

    use_assignment("ps2_layer_norm")          # once, in the notebook's locked setup cell
    check("axis", layer_norm)                 # a test cell: visible battery
    check("axis", layer_norm, hidden=True)    # the same cell's hidden battery (autograde only)

Builds the cases, runs them in-process under guards (`run_case`), judges them, and
raises AssertionError with the judge's message on failure. It returns None, so a
test cell shows no output when it passes (nbgrader would read a number as partial
credit).
"""

from __future__ import annotations

from .runner import run_cases
from .spec import DEFAULT_SEED

_current: dict[str, str] = {}


def use_assignment(assignment: str) -> None:
    """Say which assignment's checks `check` runs (the notebook's setup cell calls this)."""
    from . import CHECKS

    if assignment not in CHECKS:
        raise KeyError(f"unknown assignment {assignment!r}; expected one of {', '.join(CHECKS)}")
    _current["assignment"] = assignment


def check(
    grade_id: str,
    *targets,
    hidden: bool = False,
    assignment: str | None = None,
    seed: int = DEFAULT_SEED,
) -> None:
    """Run grade cell `grade_id`'s check on `targets`; raise AssertionError on failure."""
    __tracebackhide__ = True  # IPython and pytest: show the message, not this frame
    from . import CHECKS

    name = assignment or _current.get("assignment")
    if name is None:
        raise RuntimeError(
            "no assignment chosen: run the notebook's first code cell (use_assignment(...))"
        )
    spec = CHECKS[name][grade_id]
    if len(targets) != len(spec.targets):
        raise TypeError(
            f"check({grade_id!r}) reads {len(spec.targets)} value(s), "
            f"{', '.join(spec.targets)}; got {len(targets)}"
        )
    namespace = dict(zip(spec.targets, targets, strict=True))
    cases = spec.make_cases(seed, hidden=hidden)
    message = spec.judge(cases, run_cases(namespace, cases))
    if message is not None:
        raise AssertionError(message)
