"""The judge of every cell that reads choices of the normalization formula, and its builder.

A match of the student's output (`formulas`) that is right on the choices the cell reads passes
(`qualified`: apart from others, or not judged where they hide it); else `explain(seen,
closest)` says what is wrong, shown the match with the fewest wrong choices, or None when none
matches (it then checks the property itself). It serves ps2-ps4's functions (`NormKind`) and
ps8's module (`ps8_probes.MODULE`); a *target* says what is right and how the output is read:

    target.who             whose statistics a message names ("layer_norm", "your module")
    target.center          whether the right formula subtracts the mean
    target.x_of(case)      the input the statistics are over, float64
    target.axes_of(case)   the axes the right formula normalizes over
    target.matches(seen)   the formulas the output matches, in `formulas.members`' order
    target.fallback(seen)  a verdict of its own when the output matches no formula, or None
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import formulas, qualified
from ..evidence import fmt, record, where, worst
from ..oracle import ASK
from .kind import NormKind, norm_cell

CHOICES = formulas.CHOICES


def wrong_choices(v: formulas.Formula, axes: tuple[int, ...], center: bool, eps: float) -> set:
    """The choices on which formula v differs from the right one (over `axes`, centring or not,
    the population statistic, eps inside the root)."""
    right_eps = v.eps_mode == "inside" or (v.eps_mode == "fixed" and v.fixed_eps == eps)
    wrong = (v.axes != axes, v.center != center, v.divisor != "n", not right_eps)
    return {choice for choice, bad in zip(CHOICES, wrong, strict=True) if bad}


def formula_judge(target, read, choices: set, explain, cells, words=qualified.WORDS):
    """The judge of a cell that reads `choices` of the formula (see the module docstring);
    `read` turns a result into the value rules see; `cells`: {choice: the cell that reads it}
    (or a function of the case giving it)."""

    def rule(seen):
        axes, eps = target.axes_of(seen.case), seen.case.meta["eps"]
        matches = target.matches(seen)
        wrong = {v: wrong_choices(v, axes, target.center, eps) for v in matches}
        hides = lambda v: _hides(target, seen, v, axes, choices)  # noqa: E731
        found = qualified.reading(matches, wrong, choices, hides)
        if found != "fails":
            return found
        if not matches:
            lost = target.fallback(seen)
            if lost:
                return lost
        closest = min(matches, key=lambda v: len(wrong[v])) if matches else None
        return explain(seen, closest)

    return qualified.qualified_judge(read, rule, cells, words)


def _hides(target, seen, formula, axes, choices: set) -> str | None:
    """Why a formula's wrong axes hide `choices` on this case, or None: statistics over a set
    of one value (an axis of length one) give 0 (or a sign) whatever the choice."""
    x = target.x_of(seen.case)
    if formula.axes == axes or int(np.prod([x.shape[a] for a in formula.axes])) > 1:
        return None
    shown = " or ".join(qualified.READS[c] for c in sorted(choices))
    return (
        f"for {where(seen.case)}, {target.who} takes its statistics over "
        f"{formulas.describe_axes(formula.axes, x.ndim)}, one value each on this input, so its "
        f"output cannot show {shown}."
    )


def choice_cell(builder, kind: NormKind, grade_id: str, choice: str, explain, summary, **fields):
    """The cell of `kind`'s function that reads `choice`, made by `builder` (its battery)."""
    cells: dict = {}  # {choice: the cell that reads it}, linked when registered
    words = {**qualified.WORDS, "divisor": f"the {kind.statistic_name}"}
    judge = formula_judge(kind, kind.read, {choice}, explain, cells, words)
    other_eps = fields.pop("other_eps", ())
    return norm_cell(
        builder,
        kind,
        grade_id,
        judge,
        summary,
        questions=formula_questions(kind, other_eps),
        reads=(choice,),
        choices=cells,
        **fields,
    )


def formula_questions(kind: NormKind, other_eps=()):
    """The questions of a choice cell, for each case: the formulas on the case's input (also
    at each of `other_eps`), and for a per-record norm the statistics `lost_keepdims` reads."""

    def questions(case) -> list:
        x = kind.x_of(case)
        asked = [ASK.formula_outputs(x, eps) for eps in (case.meta["eps"], *other_eps)]
        return asked if kind.leading_axes else [*asked, ASK.statistics(x)]

    return questions


def output_of(seen, formula: formulas.Formula, **change) -> np.ndarray:
    """The output of `formula` (with `change`d choices, e.g. center=True) on the case's input."""
    x = np.asarray(seen.case.args[0], dtype=np.float64)
    return seen.oracle.formula_outputs(x, seen.case.meta["eps"])[replace(formula, **change)]


def correct_formula(kind: NormKind, ndim: int) -> formulas.Formula:
    """The formula the student should have written."""
    return formulas.Formula(kind.correct_axes(ndim), kind.center, "n", "inside")


def evidence_of_difference(y, z) -> str:
    """The record where the output y differs most from z (the same formula, this choice right)."""
    index = worst(y, z, formulas.MATCH_RTOL, formulas.MATCH_ATOL)
    if index is None:
        index = (0,) * np.ndim(y)
    r = tuple(index[:-1])
    if not r:
        return f" You returned {fmt(y)}; expected {fmt(z)}."
    return f" Record {record(r)}: you returned {fmt(y[r])}; expected {fmt(z[r])}."
