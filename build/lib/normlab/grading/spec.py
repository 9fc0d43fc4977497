"""`CheckSpec`: one grade cell's check, declared apart from the cases it runs on.

What a check *is* ships with the course's checks (`check_spec`, here): its targets, its judge,
the questions the judge may put to the oracle about each case, its summary and points. What it
*runs on*, its battery, is made by the answer key, which never ships
(`normlab.answer_key.batteries`), or replayed from the student download's recording: the
catalog binds one or the other (`with_battery`). `registry` indexes an assignment's specs by
grade_id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from normlab_sandbox.cases import Case, Result

from .pools import POOLS
from .verdict import Verdict, as_verdict

DEFAULT_SEED = 0


def no_questions(case: Case) -> list:
    """The questions of a judge that asks the oracle nothing."""
    return []


def _unbound(seed: int = DEFAULT_SEED, hidden: bool = True, variant=None) -> list[Case]:
    raise LookupError("this check has no battery bound (normlab.grading.catalog binds them)")


@dataclass(frozen=True)
class CheckSpec:
    """The check behind one autograded test cell (named by the cell's nbgrader grade_id).

    targets       names the check reads from the student's namespace, in the order
                  the test cell passes them to `check(grade_id, *targets)`
    judge         judge(cases, results, oracle) -> Verdict; pure: passed, or the message
                  naming the misconception with the smallest evidence, and its category
    questions     questions(case) -> [oracle.Question]: what the judge may ask the oracle
                  about that case (the oracle refuses anything else)
    summary       what the check wants, in a few words (a passing check's line)
    misconception what it catches, in a few words (the class report's label)
    points        the grade cell's points (its nbgrader metadata is the truth at
                  grading; a test keeps this copy equal to it), shown by a passing check
    category      the category of the misconception the cell tests (by default its grade_id)
    salt          names the check's random stream (by default its grade_id)
    voids         the cell is its function's reuse cell: its finding that the function hands
                  its work to a library voids the function's other cells too, under the
                  course's policy (`selfcheck.run_check`)
    apart_from    the cells whose misconceptions this one may pass apart from, saying so
                  ("✓ values, apart from the variance: see population_variance": `qualified`)
    hidden_by     the cells whose misconceptions may hide what this one reads ("not judged:
                  fix axis first"); with the two above, the rubric (`rubric`)
    assignment    the assignment the cell belongs to (bound by the catalog)
    make_cases    make_cases(seed, hidden=True, variant=None) -> list[Case]; pure.
                  hidden=False is the visible battery of the released notebook; hidden=True
                  is the autograde battery, which starts with the visible cases. A check of
                  an assignment with per-student variants (`varies`: ps1) runs on the
                  student's `variant` (`pools.variant`), which it requires. Bound by the
                  catalog.
    """

    grade_id: str
    targets: tuple[str, ...]
    judge: Callable[[list[Case], list[Result], object], Verdict]
    summary: str
    misconception: str
    points: float
    category: str
    questions: Callable[[Case], list] = no_questions
    salt: str = ""
    voids: bool = False
    apart_from: tuple[str, ...] = ()
    hidden_by: tuple[str, ...] = ()
    assignment: str = ""
    make_cases: Callable[..., list[Case]] = field(default=_unbound, compare=False)

    @property
    def varies(self) -> bool:
        """Does the check run on each student's own variant (`pools.POOLS`)?"""
        return self.assignment in POOLS

    def with_cases(self, make_cases) -> CheckSpec:
        """This check on battery `make_cases(seed, hidden, variant)`."""
        return replace(self, make_cases=make_cases)


def check_spec(
    grade_id: str,
    targets,
    judge,
    summary: str,
    *,
    misconception: str,
    points: float,
    questions=no_questions,
    category: str = "",
    salt: str = "",
    voids: bool = False,
    apart_from=(),
    hidden_by=(),
) -> CheckSpec:
    """The CheckSpec of a cell worth `points` whose verdicts are judge(cases, results, oracle)
    -> Verdict | message | None (see `judges`): a bare message names this cell's
    misconception, `category` (its grade_id). targets is one name or a tuple of names;
    `salt` names the check's random stream (see `normlab.answer_key.batteries`)."""
    targets = (targets,) if isinstance(targets, str) else tuple(targets)
    category = category or grade_id

    def judged(cases, results, oracle) -> Verdict:
        return as_verdict(judge(cases, results, oracle), category)

    return CheckSpec(
        grade_id,
        targets,
        judged,
        summary,
        misconception,
        points,
        category,
        questions,
        salt or grade_id,
        voids,
        tuple(apart_from),
        tuple(hidden_by),
    )


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
