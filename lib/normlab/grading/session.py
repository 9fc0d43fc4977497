"""`Session`: one notebook's grading, and the rules that carry across its cells.

Each battery is judged alone (`judge_battery`); the session holds what the rules across cells
need, and `Session.judge` applies them (so a student's kernel, `selfcheck.use_assignment`, and
the course's grader, `normlab.course.grader.notebook`, judge alike):

- the reuse policy (`policy`, nbgrader_config.py's `c.NormlabGrading.reuse_voids`):
  "function", a function that hands its work to a library earns nothing (each cell of it first
  runs the function's reuse cell, and is not judged if that finds the hand-over), or "cell",
  its reuse cell alone scores 0;
- one cause, said once: a failure whose cause is the function's (it raised, returns another
  shape) is said in full by the function's first cell that shows it, "same cause as <cell>"
  by the others;
- a battery is judged once while test cells run one after another: verdicts are kept (`memo`),
  by the objects checked, until a cell that is anything else begins (`cell_begins`);
- the student's own numbers (`variant`), for an assignment with a pool (ps1).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from normlab_sandbox import student_variant

from . import backing
from .catalog import CHECKS, cells_of, reuse_cell
from .checkcell import parse_test_cell
from .normchecks.cells import REUSE
from .oracle import DeclaredOracle
from .spec import DEFAULT_SEED, CheckSpec
from .verdict import NOT_JUDGED, NOT_WRITTEN, Verdict

POLICIES = ("function", "cell")  # the course's reuse policies (c.NormlabGrading.reuse_voids)
POLICY_ENV = "NORMLAB_REUSE_VOIDS"  # how nbgrader's kernels learn it (course.plugins)


class CheckerError(Exception):
    """The check itself failed, building its cases or judging (a bug in the course, which
    scores the cell 0); the original exception is its __cause__."""


def judge_battery(
    spec: CheckSpec,
    run_one,
    *,
    hidden: bool = False,
    seed: int = DEFAULT_SEED,
    oracle=None,
    variant: dict | None = None,
) -> Verdict:
    """The judge's `Verdict` on one battery of `spec`, alone; run_one(case) -> Result runs
    each case where the student's code lives (its exceptions pass through); `oracle` (by default
    the backing's) answers only the questions the check declares (`oracle.DeclaredOracle`)."""
    if spec.varies and variant is None:
        return Verdict(NOT_WRITTEN, f"not checked yet: {student_variant.NOT_KNOWN}")
    found = backing.current()
    try:
        cases = spec.make_cases(seed, hidden=hidden, variant=variant)
        asked = [q for case in cases for q in spec.questions(case)]
        declared = DeclaredOracle(oracle or found, asked)
    except Exception as exc:
        raise CheckerError(f"the check could not build its cases: {exc}") from exc
    results = [run_one(case) for case in cases]
    try:
        return found.unanswered(results) or spec.judge(cases, results, declared)
    except Exception as exc:
        raise CheckerError(f"the check could not judge: {exc}") from exc


_POLICY_WORDS = {
    "function": "Handing the work to a library earns {function} nothing: every cell of it "
    "scores 0.",
    "cell": "This cell scores 0; the other cells still grade your numbers.",
}


@dataclass
class Session:
    """One notebook's grading (see the module docstring).

    policy       the reuse policy, one of POLICIES
    variant      the student's own numbers (ps1), or None; `student`, `how`, `claimed`: whose
                 they are, how that was found, and the notebook's STUDENT
    memo         {key (the objects checked): (held, {battery: Verdict})}; None where cells are
                 not told apart (then nothing is kept)
    log          every check call's (spec, hidden, Verdict), in order
    """

    assignment: str
    policy: str = POLICIES[0]
    variant: dict | None = None
    student: str | None = None
    how: str = ""
    claimed: str = ""
    memo: dict | None = None
    log: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.assignment not in CHECKS:
            known = ", ".join(CHECKS)
            raise KeyError(f"unknown assignment {self.assignment!r}; expected one of {known}")
        if self.policy not in POLICIES:
            raise ValueError(f"reuse_voids must be one of {POLICIES}; got {self.policy!r}")

    def cell_begins(self, source: str) -> None:
        """A cell of `source` is about to run: unless it is only check calls, the verdicts kept
        are dropped (it may change anything). The first call starts keeping them."""
        if self.memo is None or parse_test_cell(source) is None:
            self.memo = {}

    def on_cell(self, info) -> None:
        """IPython's pre_run_cell event (`selfcheck.use_assignment` registers it)."""
        self.cell_begins(info.raw_cell)

    def cells_end(self) -> None:
        """The runner that said where cells begin ran its last: nothing is kept any more."""
        self.memo = None

    def kept(self, key, held=()) -> dict | None:
        """The verdicts kept for checks of `key` (None when cells are not told apart); `held`:
        objects kept alive while their ids are the key."""
        return None if self.memo is None else self.memo.setdefault(key, (held, {}))[1]

    def judge(
        self, spec: CheckSpec, run_one, *, hidden=False, seed=DEFAULT_SEED, oracle=None, kept=None
    ) -> Verdict:
        """One battery of `spec` with the rules across cells; `kept`: the verdicts already
        judged on the same objects (`kept()`), read and added to."""

        def judged(battery: CheckSpec) -> Verdict:
            key = (battery.assignment, battery.grade_id, hidden, seed)
            if kept is not None and key in kept:
                return kept[key]
            found = judge_battery(
                battery, run_one, hidden=hidden, seed=seed, oracle=oracle, variant=self.variant
            )
            if kept is not None:
                kept[key] = found
            return found

        reuse = reuse_cell(spec)
        if reuse is not None and self.policy == "function":
            found = judged(reuse)
            if _hands_over(reuse, found):
                return Verdict(
                    NOT_JUDGED,
                    f"not judged: {spec.targets[0]} hands the work to {found.cause}; "
                    f"see {reuse.grade_id}.",
                )
        verdict = judged(spec)
        if spec.voids and _hands_over(spec, verdict):
            words = _POLICY_WORDS[self.policy].format(function=spec.targets[0])
            return replace(verdict, message=f"{verdict.message} {words}")
        if not verdict.passed and verdict.cause:
            for earlier in cells_of(spec):
                if earlier is spec:
                    break
                if judged(earlier).cause == verdict.cause:
                    message = f"same cause as {earlier.grade_id}: {verdict.cause}"
                    return replace(verdict, message=message)
        return verdict


def _hands_over(reuse: CheckSpec, verdict: Verdict) -> bool:
    """Does a reuse cell's verdict find that its function hands its work to a library (not
    another failure the reuse cell saw on the way, such as a wrong shape)?"""
    found = verdict.category == reuse.category and verdict.cause is not None
    return found and verdict.message.startswith(REUSE)  # a failure: it has a message
