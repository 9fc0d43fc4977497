"""What the backward-pass problem sets share: ps5's `layer_norm_backward` and ps7's
`batch_norm_backward` are both called as (dy, x, gamma, eps=1e-5) and return (dx, dgamma, dbeta):
dx of x's shape, dgamma and dbeta one per feature (the last axis) summed over every leading
axis, all three in x's float dtype (Ba, Kiros and Hinton, 2016, arXiv:1607.06450; Ioffe and
Szegedy, 2015, arXiv:1502.03167).
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from .evidence import THREE_ARRAYS, arrays_output, shown_type, where
from .judges import each_case, returned
from .normchecks.cells import reuse_spec, untouched_spec
from .oracle import ASK
from .spec import CheckSpec, check_spec

NAMES = ("dy", "x", "gamma", "eps")


def call(function: str, dy, x, gamma=None, eps=None, *, tag="", label="", **meta) -> Case:
    """A call of the student's `function(dy, x, gamma[, eps])`; eps is passed only when given."""
    x = np.asarray(x)
    gamma = np.ones(x.shape[-1], dtype=x.dtype) if gamma is None else np.asarray(gamma)
    args = (np.asarray(dy), x, gamma) + ((eps,) if eps is not None else ())
    if not label:
        label = f"x of shape {x.shape}" + (f", eps = {eps:g}" if eps is not None else "")
        label += f", {x.dtype}" if x.dtype != np.float64 else ""
    meta = {"eps": 1e-5 if eps is None else float(eps), **meta}
    return Case(function, "call", args, tag=tag, label=label, meta=meta)


def triple(case: Case, result):
    """Reader: (dx, dgamma, dbeta) as float64 arrays of the right shapes, or the problem."""
    d = case.args[1].shape[-1:]
    parts, shapes = ("dx", "dgamma", "dbeta"), (case.args[1].shape, d, d)
    return arrays_output(case.target, case, result, parts, shapes=shapes)


def x_hat(oracle, x, eps: float, axes=None) -> tuple[np.ndarray, np.ndarray]:
    """(x_hat, sigma) in float64: x standardized over `axes` (default: the last axis, each
    record), from the oracle's statistics (the cases are made with the live one)."""
    x = np.asarray(x, dtype=np.float64)
    axes = (x.ndim - 1,) if axes is None else tuple(axes)
    mean, var = oracle.statistics(x)[axes, 0]
    sigma = np.sqrt(np.expand_dims(var, axes) + eps)
    return (x - np.expand_dims(mean, axes)) / sigma, sigma


def sums(dx: np.ndarray, axes) -> tuple[np.ndarray, np.ndarray]:
    """(dx summed over `axes`, the most a right zero can be off by rounding)."""
    count = int(np.prod([dx.shape[a] for a in axes]))
    return dx.sum(axis=axes), 1e-8 * (1.0 + np.abs(dx).max()) * count


def dots(seen, dx: np.ndarray, axes) -> tuple[np.ndarray, np.ndarray]:
    """(dx . x_hat over `axes`, the most a right zero can be: 1e-4 of |dx| |x_hat|)."""
    xh, _ = x_hat(seen.oracle, seen.case.args[1], seen.case.meta["eps"], axes)
    dot = (dx * xh).sum(axis=axes)
    size = np.sqrt((dx * dx).sum(axis=axes) * (xh * xh).sum(axis=axes))
    return dot, 1e-4 * size + 1e-12


def x_hat_questions(case: Case) -> list:
    """The question `x_hat` asks about a case's x (its second argument): its statistics."""
    return [ASK.statistics(np.asarray(case.args[1], dtype=np.float64))]


def _dtype(seen):
    case, out, result = seen.case, seen.value, seen.result
    if result.output_type not in THREE_ARRAYS:
        return (
            f"Type: {case.target} must return three NumPy arrays (dx, dgamma, dbeta); it "
            f"returned {shown_type(result)} ({where(case)})."
        )
    x = case.args[1]
    shapes = (x.shape, x.shape[-1:], x.shape[-1:])
    for name, value, shape in zip(("dx", "dgamma", "dbeta"), out, shapes, strict=True):
        if value.shape != shape:
            return (
                f"Shape: for {where(case)}, {name} has shape {value.shape}; it should have "
                f"shape {shape} ({'the shape of x' if name == 'dx' else 'one per feature'})."
            )
        if value.dtype != x.dtype:
            return (
                f"dtype: for {where(case)}, {name} is {value.dtype}; a {x.dtype} input gives "
                f"{x.dtype} gradients."
            )
    return None


def dtype_and_shape_spec(
    function: str, grade_id: str = "dtype_and_shape", *, points: float
) -> CheckSpec:
    """Three NumPy arrays, dx of x's shape, dgamma and dbeta of (d,), all in x's dtype."""
    return check_spec(
        grade_id,
        function,
        each_case(returned, _dtype),
        "shapes and dtypes of the gradients",
        misconception="gradients of the wrong type, shape or dtype",
        points=points,
    )


def input_untouched_spec(
    function: str, grade_id: str = "input_untouched", *, points: float
) -> CheckSpec:
    """None of dy, x and gamma written into."""
    advice = "; in-place updates such as `{name} *= ...` change the caller's array."
    summary = "arguments not written into"
    return untouched_spec(grade_id, function, NAMES, advice=advice, summary=summary, points=points)


def gradient_reuse_spec(grade_id: str, function: str, *, points: float, read=triple) -> CheckSpec:
    """The reuse cell of a backward pass: no library gradient, no autograd."""
    return reuse_spec(
        grade_id,
        function,
        points=points,
        read=read,
        library="a library gradient (or autograd)",
        summary="no library gradient or autograd",
        misconception="a library gradient or autograd called",
    )
