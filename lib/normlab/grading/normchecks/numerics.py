"""numerics: float32 far from zero (offset 1e4) as good as near zero."""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from ..evidence import fmt, record, warned, where, worst
from ..judges import an_array, each_pair
from ..spec import CheckSpec, check_spec
from .kind import NormKind, call


def numerics_spec(kind: NormKind, grade_id: str = "numerics", *, points: float) -> CheckSpec:
    """float32 far from zero: the student's own float64 answer on the same numbers is the yardstick.

    The records sit at an offset of 1e4 with a spread of about 1. The student's
    function, given the very same values in float64, computes its own answer
    accurately; in float32 a one-pass E[x^2] - E[x]^2 variance cancels (about 1e8
    minus 1e8, where float32 resolves steps of 8) and the two answers part.
    Comparing a function with itself keeps every other misconception out.
    """

    def make(rng, hidden: bool) -> list[Case]:
        setups = [((3, 4, 8), 1e4)]
        if hidden:
            setups += [((6, 16), 1e4), ((4, 5, 12), -3e4)]
        cases = []
        for pair, (shape, offset) in enumerate(setups):
            far32 = (offset + rng.normal(size=shape)).astype(np.float32)
            far64 = far32.astype(np.float64)  # exactly the same numbers
            label = f"float32 records at offset {offset:g} with spread 1, shape {shape}"
            cases.append(call(kind, far64, tag="float64", pair=pair, label=label))
            cases.append(call(kind, far32, tag="float32", pair=pair, label=label))
        return cases

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

    return check_spec(
        grade_id,
        kind.function,
        make,
        each_pair(an_array, rule),
        "float32 records far from zero (no cancellation)",
        misconception="the variance cancels in float32 far from zero",
        points=points,
    )
