"""dtype_and_shape: a NumPy array of the input's shape and float dtype."""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from ..evidence import failure_of_call, where
from ..spec import CheckSpec
from .kind import NormKind, call, messy, norm_spec, rng_for


def dtype_shape_spec(kind: NormKind, grade_id: str = "dtype_and_shape") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        specs = [((5, 7), np.float64), ((2, 3, 6), np.float32)]
        if hidden:
            specs += [((2, 3, 2, 5), np.float64), ((6, 6), np.float32), ((4, 3, 5), np.float64)]
        return [
            call(kind, messy(rng, shape, spread=(0.5, 5.0)).astype(dtype), tag="dtype")
            for shape, dtype in specs
        ]

    def judge(cases, results):
        for case, result in zip(cases, results, strict=True):
            problem = failure_of_call(kind.function, case, result)
            if problem:
                return problem
            x = case.args[0]
            if result.output_type != "numpy.ndarray":
                return (
                    f"Type: for {where(case)}, {kind.function} returned {result.output_type}, "
                    f"not a NumPy array."
                )
            y = result.output
            if y.shape != x.shape:
                return (
                    f"Shape: for {where(case)}, {kind.function} returned shape {y.shape}; the "
                    f"output has the input's shape {x.shape} (keepdims=True keeps the "
                    f"statistics broadcastable)."
                )
            if y.dtype != x.dtype:
                return (
                    f"dtype: for {where(case)}, {kind.function} returned {y.dtype}; a {x.dtype} "
                    f"input gives a {x.dtype} output (compute in float64 if you like, then "
                    f"cast back with .astype(x.dtype))."
                )
        return None

    summary = "returns an array of the input's shape and dtype"
    return norm_spec(kind, grade_id, make_cases, judge, summary)
