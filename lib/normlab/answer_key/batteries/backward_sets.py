"""The batteries the backward problem sets share (ps5's layer_norm_backward, ps7's
batch_norm_backward): the cases of the dtype_and_shape and input_untouched cells
(`normlab.grading.gradients`), and ps5's upstream gradient both correction terms ignore."""

from __future__ import annotations

import numpy as np

from ...grading.gradients import call, x_hat
from ..live import LIVE
from ..random_inputs import each, messy


def orthogonal_dy(rng, x, eps: float) -> np.ndarray:
    """A dy orthogonal, in each record (over the last axis), to the constant vector and to
    x_hat: for it both correction terms of LayerNorm's dx vanish, and dx = dy * gamma / sigma."""
    axes = (np.ndim(x) - 1,)
    xh, _ = x_hat(LIVE, x, eps, axes)
    dy = rng.normal(size=np.shape(x))
    dy -= dy.mean(axis=axes, keepdims=True)
    unit = xh - xh.mean(axis=axes, keepdims=True)
    unit /= np.sqrt((unit * unit).sum(axis=axes, keepdims=True))
    return dy - unit * (dy * unit).sum(axis=axes, keepdims=True)


DTYPE_CASES = (
    [((4, 6), np.float64), ((2, 3, 5), np.float32)],
    [((2, 2, 2, 4), np.float64), ((5, 5), np.float32)],
)
UNTOUCHED_SHAPES = ([(3, 5)], [(2, 3, 4)])


def dtypes(function: str, cases=DTYPE_CASES):
    """A backward's dtype_and_shape battery; cases: (visible, hidden too), lists of (shape,
    dtype)."""
    return each(_dtype_case, *cases, function=function)


def _dtype_case(rng, setup, function: str):
    shape, dtype = setup
    dy, x = rng.normal(size=shape), messy(rng, shape, spread=(0.5, 5))
    return call(function, dy.astype(dtype), x.astype(dtype), None, tag="dt")


def untouched(function: str, shapes=UNTOUCHED_SHAPES):
    """A backward's input_untouched battery; shapes: (visible, hidden too)."""
    return each(_untouched_case, *shapes, function=function)


def _untouched_case(rng, shape, function: str):
    dy, x, gamma = rng.normal(size=shape), messy(rng, shape), rng.uniform(0.5, 2, shape[-1])
    return call(function, dy, x, gamma, tag="io")
