"""dtype_and_shape: a NumPy array of the input's shape and float dtype."""

from __future__ import annotations

from ..evidence import shown_type, where
from ..judges import each_case, returned
from ..spec import CheckSpec, check_spec
from .kind import NormKind


def like_the_input(seen):
    """Rule: the output is a NumPy array of the input's (the first argument's) shape and dtype."""
    case, y, x = seen.case, seen.value, seen.case.args[0]
    if seen.result.output_type != "numpy.ndarray":
        return (
            f"Type: for {where(case)}, {case.target} returned {shown_type(seen.result)}, "
            f"not a NumPy array."
        )
    if y.shape != x.shape:
        return (
            f"Shape: for {where(case)}, {case.target} returned shape {y.shape}; the "
            f"output has the input's shape {x.shape} (keepdims=True keeps the "
            f"statistics broadcastable)."
        )
    if y.dtype != x.dtype:
        return (
            f"dtype: for {where(case)}, {case.target} returned {y.dtype}; a {x.dtype} "
            f"input gives a {x.dtype} output (compute in float64 if you like, then "
            f"cast back with .astype(x.dtype))."
        )
    return None


def like_the_input_spec(grade_id: str, function: str, *, points: float, **fields) -> CheckSpec:
    """The cell of `function` whose output must be like its input (`like_the_input`)."""
    return check_spec(
        grade_id,
        function,
        each_case(returned, like_the_input),
        "returns an array of the input's shape and dtype",
        misconception="the output's type, shape or dtype wrong",
        points=points,
        **fields,
    )


def dtype_and_shape_spec(
    kind: NormKind, grade_id: str = "dtype_and_shape", *, points: float
) -> CheckSpec:
    builder = {"builder": dtype_and_shape_spec, "kind": kind}
    return like_the_input_spec(grade_id, kind.function, points=points, **builder)
