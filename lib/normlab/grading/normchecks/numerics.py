"""numerics: float32 far from zero (offset 1e4) as good as near zero."""

from __future__ import annotations

import numpy as np

from ..evidence import fmt, record, warned, where, worst
from ..judges import an_array, each_pair
from ..spec import CheckSpec
from .kind import NormKind, norm_cell


def numerics_spec(kind: NormKind, grade_id: str = "numerics", *, points: float) -> CheckSpec:
    """float32 far from zero: the student's own float64 answer on the same numbers is the yardstick.

    The records sit at an offset of 1e4 with a spread of about 1. The student's
    function, given the very same values in float64, computes its own answer
    accurately; in float32 a one-pass E[x^2] - E[x]^2 variance cancels (about 1e8
    minus 1e8, where float32 resolves steps of 8) and the two answers part.
    Comparing a function with itself keeps every other misconception out.
    """

    def rule(seen):
        y64, y32 = seen.first, seen.value
        index = worst(y32, y64, 0.0, 2e-2 * (1 + np.abs(y64).max()))
        if index is None:
            return None
        r = tuple(index[:-1])
        return (
            f"Numerics: for {where(seen.case)}, record {record(r)} gives {fmt(y32[r])}, but "
            f"your own function on the same numbers in float64 gives {fmt(y64[r])}"
            f"{warned(seen.result)}. Far from zero, E[x^2] - E[x]^2 subtracts two huge, "
            f"nearly equal numbers and the variance cancels (it can even turn negative): "
            f"subtract the mean first, then average the squares (two passes)."
        )

    return norm_cell(
        numerics_spec,
        kind,
        grade_id,
        each_pair(an_array, rule),
        "float32 records far from zero (no cancellation)",
        misconception="the variance cancels in float32 far from zero",
        points=points,
    )
