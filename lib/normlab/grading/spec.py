"""`CheckSpec`: one grade cell's check, split into building cases and judging results.

`check_spec` is the one way the assignments build them; `registry` indexes an
assignment's specs by grade_id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from normlab_sandbox.cases import Case, Result

from .random_inputs import rng_for
from .verdict import Verdict, as_verdict

DEFAULT_SEED = 0


@dataclass(frozen=True)
class CheckSpec:
    """The check behind one autograded test cell (named by the cell's nbgrader grade_id).

    targets       names the check reads from the student's namespace, in the order
                  the test cell passes them to `check(grade_id, *targets)`
    make_cases    make_cases(seed, hidden=True) -> list[Case]; pure. hidden=False is
                  the visible battery of the released notebook; hidden=True is the
                  autograde battery, which starts with the visible cases
    judge         judge(cases, results, oracle) -> Verdict; pure: passed, or the message
                  naming the misconception with the smallest evidence, and its category
    summary       what the check wants, in a few words (a passing check's line)
    misconception what it catches, in a few words (the class report's label)
    points        the grade cell's points (its nbgrader metadata is the truth at
                  grading; a test keeps this copy equal to it), shown by a passing check
    category      the category of the misconception the cell tests (by default its grade_id)
    """

    grade_id: str
    targets: tuple[str, ...]
    make_cases: Callable[..., list[Case]]
    judge: Callable[[list[Case], list[Result], object], Verdict]
    summary: str
    misconception: str
    points: float
    category: str


def check_spec(
    grade_id: str,
    targets,
    make,
    judge,
    summary: str,
    *,
    misconception: str,
    points: float,
    category: str = "",
    salt: str = "",
) -> CheckSpec:
    """The CheckSpec of a cell worth `points` whose cases are make(rng, hidden) -> list[Case]
    and whose verdicts are judge(cases, results, oracle) -> Verdict | message | None (see
    `judges`): a bare message names this cell's misconception, `category` (its grade_id).

    targets is one name or a tuple of names. rng is `rng_for(seed, salt or grade_id)`:
    every check draws from its own random stream, so no check's cases depend on another's.
    """
    targets = (targets,) if isinstance(targets, str) else tuple(targets)
    category = category or grade_id

    def make_cases(seed: int = DEFAULT_SEED, hidden: bool = True) -> list[Case]:
        return make(rng_for(seed, salt or grade_id), hidden)

    def judged(cases, results, oracle) -> Verdict:
        return as_verdict(judge(cases, results, oracle), category)

    return CheckSpec(
        grade_id, targets, make_cases, judged, summary, misconception, points, category
    )


def hidden_only(extras: list) -> list:
    """What only a hidden battery holds, written as data where a check is declared (the
    shapes a case maker adds when hidden=True, say): `extras` itself. The student download
    ships the checks' code with each `hidden_only(...)` emptied, as it ships each case maker
    (a function that takes `rng`) with its body stripped (normlab.course.download.source)."""
    return extras


def registry(*specs: CheckSpec) -> dict[str, CheckSpec]:
    """Index specs by grade_id; a duplicate id, or a cell worth no points, is a mistake."""
    found: dict[str, CheckSpec] = {}
    for spec in specs:
        if spec.grade_id in found:
            raise ValueError(f"two checks share the grade_id {spec.grade_id!r}")
        if not spec.points > 0:
            raise ValueError(f"the check {spec.grade_id!r} is worth no points")
        found[spec.grade_id] = spec
    return found
