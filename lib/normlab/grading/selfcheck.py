"""What a notebook calls in the student's kernel: `use_assignment`, `check` and `summary`.

    use_assignment("ps2_layer_norm")          # once, in the notebook's locked setup cell
    check("axis", layer_norm)                 # a test cell: the visible battery
    check("axis", layer_norm, hidden=True)    # the same cell's hidden battery (autograde only)
    summary(globals())                        # the notebook's last cell

`check` builds the cases, runs them in-process under guards (`run_case`), judges them,
and raises AssertionError with the judge's message on failure. A visible check that
passes prints one line to stdout, a tick, its grade_id, what it checks (the CheckSpec's
summary) and its points, "✓ <grade_id>: <summary> (<points> points)"; a hidden one prints
nothing. Both return None: nbgrader reads a test cell's execute_result as partial credit,
and zeroes a cell that writes to stderr.
`summary` re-runs every visible check on the notebook's namespace and prints how many
pass and the points they cover; it never raises.

`find_check` (lookup and arity) and `run_check` (cases, runs, judge: a `Verdict`) are the
resolution `check` shares with the sandboxed grader (`normlab.course`), which runs the cases
in another process. Both judge with the live oracle (`normlab.grading.oracle`); `run_check`
takes another (a student download's replay of recorded expectations) as `oracle=`.
"""

from __future__ import annotations

from functools import partial

from .catalog import CHECKS
from .oracle import LIVE
from .runner import run_case
from .spec import DEFAULT_SEED, CheckSpec
from .verdict import Verdict

_current: dict[str, str] = {}


def use_assignment(assignment: str) -> None:
    """Say which assignment's checks `check` runs (the notebook's setup cell calls this)."""
    if assignment not in CHECKS:
        raise KeyError(f"unknown assignment {assignment!r}; expected one of {', '.join(CHECKS)}")
    _current["assignment"] = assignment


def find_check(assignment: str, grade_id: str, count: int) -> CheckSpec:
    """The CheckSpec of grade cell `grade_id` of `assignment`, called with `count` targets.

    KeyError when there is no such cell, TypeError when `count` is not its number of targets.
    """
    spec = CHECKS.get(assignment, {}).get(grade_id)
    if spec is None:
        raise KeyError(grade_id)
    if count != len(spec.targets):
        raise TypeError(
            f"check({grade_id!r}) reads {len(spec.targets)} value(s), "
            f"{', '.join(spec.targets)}; got {count}"
        )
    return spec


class CheckerError(Exception):
    """The check itself failed, building its cases or judging (a bug in the course, which
    scores the cell 0); the original exception is its __cause__."""


def run_check(
    spec: CheckSpec,
    run_one,
    *,
    hidden: bool = False,
    seed: int = DEFAULT_SEED,
    oracle=LIVE,
) -> Verdict:
    """The `Verdict` on one battery of `spec`; run_one(case) -> Result runs each case wherever
    the student's code lives (its exceptions pass through); expectations come from `oracle`."""
    try:
        cases = spec.make_cases(seed, hidden=hidden)
    except Exception as exc:
        raise CheckerError(f"the check could not build its cases: {exc}") from exc
    results = [run_one(case) for case in cases]
    try:
        return spec.judge(cases, results, oracle)
    except Exception as exc:
        raise CheckerError(f"the check could not judge: {exc}") from exc


def points(value: float) -> str:
    """'1 point', '3 points'."""
    return f"{value:g} point{'' if value == 1 else 's'}"


def check_line(spec: CheckSpec, mark: str) -> str:
    """One check's line, "<mark> <grade_id>: <summary> (<points>)"; mark ✓ or ✗."""
    return f"{mark} {spec.grade_id}: {spec.summary} ({points(spec.points)})"


def passed_line(spec: CheckSpec) -> str:
    """What a passing visible check prints."""
    return check_line(spec, "✓")


def _chosen() -> str:
    name = _current.get("assignment")
    if name is None:
        raise RuntimeError(
            "no assignment chosen: run the notebook's first code cell (use_assignment(...))"
        )
    return name


def check(
    grade_id: str,
    *targets,
    hidden: bool = False,
    assignment: str | None = None,
    seed: int = DEFAULT_SEED,
) -> None:
    """Run grade cell `grade_id`'s check on `targets`; raise AssertionError on failure."""
    __tracebackhide__ = True  # IPython and pytest: show the message, not this frame
    spec = find_check(assignment or _chosen(), grade_id, len(targets))
    namespace = dict(zip(spec.targets, targets, strict=True))
    verdict = run_check(spec, partial(run_case, namespace), hidden=hidden, seed=seed)
    if not verdict.passed:
        raise AssertionError(verdict.failure_text(hidden))
    if not hidden:
        print(passed_line(spec) + "\n", end="")  # one write: one stream message


def summary(namespace: dict) -> None:
    """Print how many visible checks pass on `namespace` (the notebook's `globals()`) and
    the points they cover, with a line per check; never raises."""
    try:
        specs = CHECKS[_chosen()].values()
        lines, passed, earned = [], 0, 0.0
        for spec in specs:
            try:
                ok = run_check(spec, partial(run_case, namespace)).passed
            except Exception:  # noqa: BLE001 (a check that cannot run does not pass)
                ok = False
            passed += ok
            earned += spec.points if ok else 0.0
            lines.append(check_line(spec, "✓" if ok else "✗"))
        total = sum(spec.points for spec in specs)
        print(
            f"{passed} of {len(lines)} visible checks pass, covering {earned:g} of the "
            f"{points(total)} they check."
        )
        print("\n".join(lines))
        print(
            "Grading runs the same checks on more inputs (hidden ones), so a check that "
            "passes here can still fail there: a failed check's message says what to fix."
        )
    except Exception as exc:  # noqa: BLE001 (a summary must never stop a notebook)
        print(f"The summary could not run ({type(exc).__name__}: {exc}).")
