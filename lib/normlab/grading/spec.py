"""`CheckSpec`: one autograded cell's check, declared once in its set's module (`psN_<name>.py`);
`Checks`, an assignment's set of them. Everything else (batteries, choice cells, the rubric, the
tests' mutants) refers to the object; its cases come from the install's backing (`backing`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace

from normlab_sandbox.cases import Case, Result

from .formulas import CHOICES
from .pools import POOLS
from .verdict import Verdict, as_verdict

DEFAULT_SEED = 0


@dataclass(frozen=True, eq=False)
class CheckSpec:
    """The check behind one autograded test cell (named by the cell's nbgrader grade_id).

    targets       names read from the student's namespace, in `check(grade_id, *targets)`'s order
    judge         judge(cases, results, oracle) -> Verdict, pure (`judges`, `verdict`)
    questions     questions(case) -> [oracle.Question]: all the judge may ask the oracle
    summary       what the check wants, in a few words (a passing check's line)
    misconception what it catches, in a few words (the class report's label)
    points        the grade cell's points (`make release` writes them into the notebooks)
    category      the misconception's category (by default the grade_id)
    salt          names the check's random stream (by default its grade_id)
    voids         the function's reuse cell: under the course's policy its finding voids the
                  function's other cells too (`session.Session`)
    apart_from    cells whose misconceptions this one may pass apart from (`qualified`)
    hidden_by     cells whose misconceptions may leave this one "not judged" (`rubric`)
    reads         the formula's choices the cell reads (`formulas.CHOICES`); `choices` is then
                  {choice: grade_id} of its function's cells that read one
    builder, kind the shared builder that made it (`normchecks`, `gradients`; its battery) and
                  what it builds for
    assignment    bound by `registry`
    """

    grade_id: str
    targets: tuple[str, ...]
    judge: Callable[[list[Case], list[Result], object], Verdict]
    summary: str
    misconception: str
    points: float
    category: str
    questions: Callable[[Case], list] = lambda case: []  # by default, the oracle is not asked
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
    grade_id: str, targets, judge, summary: str, *, category: str = "", **fields
) -> CheckSpec:
    """The CheckSpec of a cell; `judge` may return a bare message (`category`'s, by default the
    grade_id) or None (`judges`); targets: one name or a tuple; `fields`: CheckSpec's others,
    `misconception` and `points` required."""
    targets = (targets,) if isinstance(targets, str) else tuple(targets)
    category = category or grade_id

    def judged(cases, results, oracle) -> Verdict:
        return as_verdict(judge(cases, results, oracle), category)

    fields.setdefault("salt", grade_id)
    return CheckSpec(grade_id, targets, judged, summary, category=category, **fields)


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
    """Link one function's choice cells: `choices`, and `apart_from` the other choices' cells,
    `hidden_by` the axes cell for any but it (an axis of one value hides the rest)."""
    for spec in specs:
        if not spec.reads:
            continue
        readers = [o for o in specs if o.reads and o.targets == spec.targets]
        cells = {c: tuple(o.grade_id for o in readers if c in o.reads) for c in CHOICES}
        spec.choices.update({c: found[0] for c, found in cells.items() if found})
        others = dict.fromkeys(g for c in CHOICES if c not in spec.reads for g in cells[c])
        object.__setattr__(spec, "apart_from", tuple(g for g in others if g != spec.grade_id))
        object.__setattr__(spec, "hidden_by", () if "axes" in spec.reads else cells["axes"])
