"""The batteries the backward problem sets share (ps5's layer_norm_backward, ps7's
batch_norm_backward): the cases of the dtype_and_shape and input_untouched cells
(`normlab.grading.gradients`), and ps5's upstream gradient both correction terms ignore."""

from __future__ import annotations

import numpy as np

from ...grading.gradients import call, x_hat
from ..live import LIVE
from ..random_inputs import messy


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
    """make(rng, hidden) for a backward's dtype_and_shape cell; cases is (visible, hidden too),
    lists of (shape, dtype)."""

    def make(rng, hidden):
        specs = cases[0] + (cases[1] if hidden else [])
        return [
            call(
                function,
                rng.normal(size=s).astype(t),
                messy(rng, s, spread=(0.5, 5)).astype(t),
                None,
                tag="dt",
            )
            for s, t in specs
        ]

    return make


def untouched(function: str, shapes=UNTOUCHED_SHAPES):
    """make(rng, hidden) for a backward's input_untouched cell; shapes is (visible, hidden
    too)."""

    def make(rng, hidden):
        shapes_now = shapes[0] + (shapes[1] if hidden else [])
        return [
            call(function, rng.normal(size=s), messy(rng, s), rng.uniform(0.5, 2, s[-1]), tag="io")
            for s in shapes_now
        ]

    return make
