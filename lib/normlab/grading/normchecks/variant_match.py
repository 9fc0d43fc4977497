"""The judge shared by the cells that read one choice of the family.

A normalization is four choices (`normlab.grading.variants`): axes, center, divisor, eps.
The judge asks the oracle for every member of the family on the case's input and which
of them the student's output matches. A match that is right on this cell's choice passes;
otherwise the cell's `explain` rule says what is wrong, shown the closest match (the fewest
wrong choices), or None when the output matches no member (then it checks the property
itself, and may pass).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from .. import qualified, variants
from ..evidence import fmt, keepdims_cause, record, where, worst
from ..judges import an_array
from ..oracle import ASK
from ..verdict import Verdict
from .kind import NormKind

CHOICES = ("axes", "center", "divisor", "eps")


def wrong_choices(v: variants.Variant, kind: NormKind, ndim: int, eps: float) -> set[str]:
    """The choices on which variant v differs from the correct `kind` (of an ndim input)."""
    right_eps = v.eps_mode == "inside" or (v.eps_mode == "fixed" and v.fixed_eps == eps)
    wrong = (
        v.axes != kind.correct_axes(ndim),
        v.center != kind.center,
        v.divisor != "n",
        not right_eps,
    )
    return {choice for choice, bad in zip(CHOICES, wrong, strict=True) if bad}


def variant_judge(kind: NormKind, choice: str, explain):
    """The judge of a cell that reads `choice` (one of CHOICES): a case passes when a
    matching variant is right on it (apart from the other choices that variant gets wrong,
    or not judged where they hide this one: `qualified`); else explain(seen, closest) ->
    message | None."""
    if choice not in CHOICES:
        raise ValueError(f"no choice {choice!r}; the family's are {CHOICES}")

    def rule(seen):
        x, eps = input_of(seen), seen.case.meta["eps"]
        outputs = seen.oracle.variant_outputs(x, eps)
        matches = variants.matching(seen.value, outputs)
        wrong = {v: wrong_choices(v, kind, x.ndim, eps) for v in matches}
        found = qualified.reading(matches, wrong, {choice}, partial(_hides, kind, choice, seen))
        if found != "fails":
            return found
        if not matches:
            lost = lost_keepdims(kind, seen)
            if lost:
                return lost
        closest = min(matches, key=lambda v: len(wrong[v])) if matches else None
        return explain(seen, closest)

    words = {**qualified.WORDS, "divisor": f"the {kind.statistic_name}"}
    return qualified.qualified_judge(an_array, rule, kind.cell_of, words)


def _hides(kind: NormKind, choice: str, seen, variant) -> str | None:
    """Why a variant's wrong axes hide `choice` on this case, or None: statistics over a set
    of one value (an axis of length one) give 0 (or a sign) whatever the choice."""
    x = input_of(seen)
    if variant.axes == kind.correct_axes(x.ndim):
        return None
    if int(np.prod([x.shape[a] for a in variant.axes])) > 1:
        return None
    return (
        f"for {where(seen.case)}, {kind.function} takes its statistics over "
        f"{variants.describe_axes(variant.axes, x.ndim)}, one value each on this input, so its "
        f"output cannot show {qualified.READS[choice]}."
    )


def interactions(kind: NormKind, choice: str) -> dict:
    """check_spec's apart_from and hidden_by for the cell of `kind` that reads `choice`: it may
    pass apart from the other choices' cells, and an axis of one value hides its choice."""
    cells = kind.cell_of
    others = tuple(cells[c] for c in CHOICES if c != choice and cells.get(c))
    hidden = () if choice == "axes" else (cells["axes"],)
    return {"apart_from": others, "hidden_by": hidden}


def variant_questions(kind: NormKind, other_eps=()):
    """The questions of a cell judged by `variant_judge`, for each case: the family on the
    case's input (also at each of `other_eps`), and for a per-record norm the statistics
    `lost_keepdims` reads."""

    def questions(case) -> list:
        x = np.asarray(case.args[0], dtype=np.float64)  # as `input_of` reads it
        asked = [ASK.variant_outputs(x, eps) for eps in (case.meta["eps"], *other_eps)]
        return asked if kind.leading_axes else [*asked, ASK.statistics(x)]

    return questions


MISSING_KEEPDIMS = "missing_keepdims"  # a misconception of its own, whichever cell shows it


def lost_keepdims(kind: NormKind, seen) -> Verdict | None:
    """The verdict when the output is what statistics that lost their axis give, else None.

    A mean of shape x.shape[:-1] (no keepdims) raises a broadcast error against x, except
    when the leading shape lines up with the features, as on a square input: then record i is
    centred and scaled with the statistics of record k for feature k, and no error shows.
    Those outputs are computed here from the oracle's statistics of the input.
    """
    if kind.leading_axes:
        return None
    x, eps = input_of(seen), seen.case.meta["eps"]
    mean, var = seen.oracle.statistics(x)[(x.ndim - 1,), 0]  # (...,): one per record
    if mean.ndim == 0:
        return None  # one record: its statistics have no axis to lose
    try:
        if np.broadcast_shapes(mean.shape, x.shape) != x.shape:
            return None
    except ValueError:
        return None
    gamma = np.asarray(seen.case.args[1], dtype=np.float64)
    beta = np.asarray(seen.case.args[2], dtype=np.float64) if kind.has_beta else 0.0
    statistic = var if kind.center else var + mean * mean  # what it divides by: (...,)
    centres = [(mean[..., None], True), (mean, False)] if kind.center else [(0.0, True)]
    for centre, centre_kept in centres:
        xc = x - centre
        scales = [
            (statistic[..., None], True),
            (statistic, False),
            ((xc * xc).mean(axis=-1), False),  # the variance of the misaligned centring
        ]
        for scale, scale_kept in scales:
            if centre_kept and scale_kept:
                continue  # the correct normalization
            with np.errstate(divide="ignore", invalid="ignore"):
                z = gamma * xc / np.sqrt(scale + eps) + beta
            if variants.same(seen.value, z):
                return Verdict(
                    MISSING_KEEPDIMS,
                    f"Missing keepdims: for {where(seen.case)}, {kind.function} normalizes "
                    f"record i with the statistics of record k at feature k. Its statistics "
                    f"over the last axis (shape {mean.shape}, one per record) lost that axis; "
                    f"on this input they still broadcast against x of shape {x.shape}, along "
                    f"the features, so no error shows. Keep the axis with keepdims=True (or "
                    f"mean[..., None]).",
                    cause=keepdims_cause(kind.function),
                )
    return None


def input_of(seen) -> np.ndarray:
    """The input x of the normalization, in float64 (its first argument)."""
    return np.asarray(seen.case.args[0], dtype=np.float64)


def output_of(seen, variant: variants.Variant, **change) -> np.ndarray:
    """The output of `variant` (with `change`d choices, e.g. center=True) on the case's input."""
    outputs = seen.oracle.variant_outputs(input_of(seen), seen.case.meta["eps"])
    return outputs[replace(variant, **change)]


def correct_variant(kind: NormKind, ndim: int) -> variants.Variant:
    """The member of the family the student should have written."""
    return variants.Variant(kind.correct_axes(ndim), kind.center, "n", "inside")


def evidence_of_difference(y, z) -> str:
    """The record where the output y differs most from z (the same variant, this choice right)."""
    index = worst(y, z, variants.MATCH_RTOL, variants.MATCH_ATOL)
    if index is None:
        index = (0,) * np.ndim(y)
    r = tuple(index[:-1])
    if not r:
        return f" You returned {fmt(y)}; expected {fmt(z)}."
    return f" Record {record(r)}: you returned {fmt(y[r])}; expected {fmt(z[r])}."
