"""ps9_dyt's batteries: Dynamic Tanh and its backward (Zhu et al., 2025, arXiv:2503.10622).

Each cell's inputs are where only its own mistake shows (see `normlab.grading.ps9_dyt`): the
alpha cell's records have one feature, the values cell's records are already standardized,
alpha is never 1 where it matters, and |alpha x| stays mostly below 2, where tanh still bends
(past it, every derivative of tanh looks alike).
"""

from __future__ import annotations

import numpy as np

from ...grading.ps9_dyt import CHECKS, bcall, call
from ..random_inputs import F32, F64, each, messy, signed_affine

CELL = CHECKS.cell


def _x(rng, shape, alpha=1.0) -> np.ndarray:
    """Records of spread about 1 / alpha, so that alpha x is mostly within +-2."""
    return messy(rng, shape, spread=(0.3, 1.0), offset=1.0) / alpha


def _standardized(rng, shape):
    x = messy(rng, shape)
    x = (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)
    return call(x, 1.0, tag="standardized", label=f"standardized records of shape {shape}")


def _alpha(rng, setup, group: int) -> list:
    shape, alpha = setup
    x = _x(rng, shape) * 2.0
    label = f"records of one feature, shape {shape}"
    calls = ((x, alpha, "x_a"), (alpha * x, 1.0, "ax_1"), (x, 1.0, "x_1"))
    return [call(*args, tag=tag, label=label, group=group) for *args, tag in calls]


def _elementwise(rng, shape) -> list:
    x = _x(rng, shape, 0.5)
    gamma, beta = signed_affine(rng, shape[-1])
    index = tuple(int(rng.integers(n)) for n in shape)
    moved = x.copy()
    moved[index] += 3.0
    return [
        call(x, 0.5, gamma, beta, tag="base"),
        call(moved, 0.5, gamma, beta, tag="moved", index=index),
    ]


def _gain_and_bias(rng, shape) -> list:
    alpha = float(rng.uniform(0.3, 2.0))
    x = _x(rng, shape, alpha)
    gamma, beta = signed_affine(rng, shape[-1])
    return [call(x, alpha, tag="plain"), call(x, alpha, gamma, beta, tag="affine")]


def _plain(rng, setup):
    """dyt on a (shape, dtype) setup."""
    shape, dtype = setup
    gamma, beta = signed_affine(rng, shape[-1])
    x = _x(rng, shape, 0.8).astype(dtype)
    return call(x, 0.8, gamma.astype(dtype), beta.astype(dtype), tag="plain")


def _gradients(rng, shape, dtypes=(np.float64,)) -> list:
    """dyt_backward on random dy, x, alpha and gamma of both signs, once per dtype."""
    cases = []
    for dtype in dtypes:
        alpha = float(rng.uniform(0.3, 2.5))
        gamma, _ = signed_affine(rng, shape[-1])
        x, dy = _x(rng, shape, alpha), rng.normal(size=shape)
        args = (dy.astype(dtype), x.astype(dtype), alpha, gamma.astype(dtype))
        cases.append(bcall(*args, tag="gradient"))
    return cases


STANDARD = ([(3, 5), (2, 3, 6)], [(6, 6), (2, 2, 3, 4)])
BATTERIES = {
    CELL.dyt_values: each(_standardized, [(3, 6), (2, 3, 5)], [(4, 8), (1, 7)]),
    CELL.dyt_alpha: each(
        _alpha, [((5, 1), 0.5), ((2, 3, 1), 2.5)], [((8, 1), 3.0), ((4, 1), 0.2)], number="group"
    ),
    CELL.dyt_elementwise: each(_elementwise, [(3, 4, 6)], [(2, 5), (1, 1, 8)]),
    CELL.dyt_gain_and_bias: each(_gain_and_bias, [(3, 4)], [(2, 3, 5), (6, 6)]),
    CELL.dyt_dtype_and_shape: each(_plain, [((5, 7), F64), ((2, 3, 6), F32)], [((6, 6), F32)]),
    CELL.dyt_input_untouched: each(_plain, [((3, 5), F64)], [((2, 3, 4), F64)]),
    CELL.dyt_reference_reuse: each(_plain, [((3, 5), F64)], [((2, 3, 4), F64)]),
    CELL.dyt_dx_alpha: each(_gradients, *STANDARD),
    CELL.dyt_dx_tanh: each(_gradients, *STANDARD),
    CELL.dyt_dalpha_scalar: each(_gradients, *STANDARD),
    CELL.dyt_dalpha_x: each(_gradients, *STANDARD),
    CELL.dyt_dgamma: each(_gradients, *STANDARD),
    CELL.dyt_dbeta: each(_gradients, *STANDARD),
    CELL.dyt_backward_dtype_and_shape: each(_gradients, [(4, 6)], [(2, 3, 5)], dtypes=(F64, F32)),
    CELL.dyt_backward_input_untouched: each(_gradients, [(3, 5)], [(2, 3, 4)]),
    CELL.dyt_backward_reference_reuse: each(_gradients, [(3, 5)], [(2, 3, 4)]),
}
