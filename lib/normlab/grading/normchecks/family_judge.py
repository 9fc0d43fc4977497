"""The judge shared by the cells that read one choice of the family.

It asks which members of the family (`normlab.grading.variants`) the student's output
matches; a match that is right on this cell's choice passes. A match that is wrong
is explained against the closest member; no match at all falls back on the property.
"""

from __future__ import annotations

import numpy as np

from .. import variants
from ..evidence import fmt, record, worst
from ..judges import an_array, each_case
from .kind import NormKind


def _wrongness(v: variants.Variant, kind: NormKind, ndim: int, eps: float) -> int:
    good_eps = v.eps_mode == "inside" or (v.eps_mode == "fixed" and v.fixed_eps == eps)
    return (
        (v.axes != kind.correct_axes(ndim))
        + (v.center != kind.center)
        + (v.divisor != "n")
        + (not good_eps)
    )


def family_judge(kind: NormKind, accept, explain, fallback):
    """The judge of a cell that reads one choice: a case passes when a matching variant is
    right on this cell's choice.

    accept(variant, case) -> bool     is a matching variant right on this cell's choice?
    explain(variant, case, x, y, result) -> str     the message for the closest wrong one
    fallback(case, x, y, result) -> None | str      when no variant matches: the property
    """

    def verdict(case, y, result):
        x = np.asarray(case.args[0], dtype=np.float64)
        eps = case.meta["eps"]
        matches = variants.matching(x, eps, y)
        if any(accept(v, case) for v in matches):
            return None
        if matches:
            closest = min(matches, key=lambda v: _wrongness(v, kind, x.ndim, eps))
            return explain(closest, case, x, y, result)
        return fallback(case, x, y, result)

    return each_case(an_array, verdict)


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
