"""`CheckSpec`: one autograded cell's check, declared once; `Checks`, an assignment's set of them.

A check is declared in its assignment's module (`psN_<name>.py`) and nowhere else: its grade_id
(the cell's nbgrader id), the names it reads, its judge, the questions the judge may put to the
oracle, its words and its points. Everything else refers to that object: the battery it runs on
(`normlab.answer_key.batteries`, keyed by the check, or by the builder that made it), the cells
that read a formula's choices (`reads`), the rubric, the tests' mutants. Its cases come from the
install's backing (`backing`), never from this package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from types import SimpleNamespace

from normlab_sandbox.cases import Case, Result

from .formulas import CHOICES
from .pools import POOLS
from .verdict import Verdict, as_verdict

DEFAULT_SEED = 0


def no_questions(case: Case) -> list:
    """The questions of a judge that asks the oracle nothing."""
    return []


@dataclass(frozen=True, eq=False)
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
    points        the grade cell's points (`make release` writes them into the notebooks)
    category      the category of the misconception the cell tests (by default its grade_id)
    salt          names the check's random stream (by default its grade_id)
    voids         the cell is its function's reuse cell: its finding that the function hands
                  its work to a library voids the function's other cells too, under the
                  course's policy (`session.Session`)
    apart_from    the cells whose misconceptions this one may pass apart from, saying so
                  ("✓ values, apart from the variance: see population_variance": `qualified`)
    hidden_by     the cells whose misconceptions may hide what this one reads ("not judged:
                  fix axis first"); with the two above, the rubric (`rubric`)
    reads         the choices of the formula (`formulas.CHOICES`) the cell reads, if any;
                  `choices` is then {choice: grade_id} of its function's cells that read one
    builder       the shared builder that made it (`normchecks`, `gradients`), whose battery
                  it runs on, with `kind`, what it builds for
    assignment    the assignment the cell belongs to (bound by `registry`)
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
    reads: tuple[str, ...] = ()
    choices: dict = field(default_factory=dict)
    builder: Callable | None = None
    kind: object = None
    assignment: str = ""

    @property
    def varies(self) -> bool:
        """Does the check run on each student's own variant (`pools.POOLS`)?"""
        return self.assignment in POOLS

    def make_cases(self, seed: int = DEFAULT_SEED, hidden: bool = True, variant=None) -> list:
        """The check's battery from the install's backing (the visible cases first; hidden:
        the autograde battery); on the student's `variant` for a check that varies."""
        from . import backing

        if self.varies and variant is None:
            raise ValueError(f"{self.assignment}'s checks run on a student's variant: pass one")
        return backing.current().cases(self, seed, hidden, variant)


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
    **options,
) -> CheckSpec:
    """The CheckSpec of a cell worth `points` whose verdicts are judge(cases, results, oracle)
    -> Verdict | message | None (see `judges`): a bare message names this cell's
    misconception, `category` (its grade_id). targets is one name or a tuple of names;
    `options` are CheckSpec's other fields (salt, voids, apart_from, hidden_by, reads,
    builder, kind)."""
    targets = (targets,) if isinstance(targets, str) else tuple(targets)
    category = category or grade_id

    def judged(cases, results, oracle) -> Verdict:
        return as_verdict(judge(cases, results, oracle), category)

    options.setdefault("salt", grade_id)
    for name in ("apart_from", "hidden_by"):
        options[name] = tuple(options.get(name, ()))
    return CheckSpec(
        grade_id,
        targets,
        judged,
        summary,
        misconception,
        points,
        category,
        questions,
        **options,
    )


class Checks(dict):
    """An assignment's checks, grade_id -> CheckSpec in the notebook's order; `cell` names
    each by attribute, `ps2_layer_norm.CHECKS.cell.axis`, as every other module refers to one
    (a misspelt cell is an AttributeError where it is written)."""

    @cached_property
    def cell(self) -> SimpleNamespace:
        return SimpleNamespace(**self)


def registry(assignment: str, *specs: CheckSpec) -> Checks:
    """`assignment`'s checks, each bound to it; a duplicate id, or a cell worth no points, is
    a mistake."""
    if not isinstance(assignment, str):
        raise TypeError(f"registry's first argument is the assignment's id, not {assignment!r}")
    found = Checks()
    for spec in specs:
        if spec.grade_id in found:
            raise ValueError(f"two checks share the grade_id {spec.grade_id!r}")
        if not spec.points > 0:
            raise ValueError(f"the check {spec.grade_id!r} is worth no points")
        if spec.assignment not in ("", assignment):
            raise ValueError(f"the check {spec.grade_id!r} is {spec.assignment}'s already")
        object.__setattr__(spec, "assignment", assignment)
        found[spec.grade_id] = spec
    _link_choice_cells(list(found.values()))
    return found


def _link_choice_cells(specs: list[CheckSpec]) -> None:
    """Tell the cells of one function that read the formula's choices which cell reads which
    (`choices`), and what each may pass apart from or be hidden by: the other choices' cells,
    and, for any but the axes cell, the axes cell (an axis of one value hides the rest)."""
    for spec in specs:
        if not spec.reads:
            continue
        readers = [o for o in specs if o.reads and o.targets == spec.targets]
        cells = partial(_reading, readers)
        spec.choices.update({c: cells([c])[0] for c in CHOICES if cells([c])})
        others = cells([c for c in CHOICES if c not in spec.reads])
        object.__setattr__(spec, "apart_from", tuple(g for g in others if g != spec.grade_id))
        object.__setattr__(spec, "hidden_by", () if "axes" in spec.reads else cells(["axes"]))


def _reading(readers: list[CheckSpec], choices) -> tuple[str, ...]:
    """The grade_ids of the cells among `readers` that read any of `choices`, in CHOICES' order."""
    found = (o.grade_id for c in CHOICES if c in choices for o in readers if c in o.reads)
    return tuple(dict.fromkeys(found))
