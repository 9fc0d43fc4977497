"""ps9_dyt's batteries: Dynamic Tanh and its backward (Zhu et al., 2025, arXiv:2503.10622).

Each cell's inputs are where only its own mistake shows (see `normlab.grading.ps9_dyt`): the
alpha cell's records have one feature, the values cell's records are already standardized,
alpha is never 1 where it matters, and |alpha x| stays mostly below 2, where tanh still bends
(past it, every derivative of tanh looks alike).
"""

from __future__ import annotations

import numpy as np

from ...grading.ps9_dyt import CHECKS, bcall, call
from ..random_inputs import messy

CELL = CHECKS.cell


def _x(rng, shape, alpha=1.0) -> np.ndarray:
    """Records of spread about 1 / alpha, so that alpha x is mostly within +-2."""
    return messy(rng, shape, spread=(0.3, 1.0), offset=1.0) / alpha


def _affine(rng, d):
    return rng.uniform(0.5, 2.0, d) * rng.choice([-1.0, 1.0], d), rng.normal(size=d)


def _values(rng, hidden: bool) -> list:
    shapes = [(3, 6), (2, 3, 5)] + ([(4, 8), (1, 7)] if hidden else [])
    cases = []
    for shape in shapes:
        x = messy(rng, shape)
        x = (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)
        cases.append(
            call(x, 1.0, tag="standardized", label=f"standardized records of shape {shape}")
        )
    return cases


def _alpha(rng, hidden: bool) -> list:
    setups = [((5, 1), 0.5), ((2, 3, 1), 2.5)] + ([((8, 1), 3.0), ((4, 1), 0.2)] if hidden else [])
    cases = []
    for group, (shape, alpha) in enumerate(setups):
        x = _x(rng, shape) * 2.0
        label = f"records of one feature, shape {shape}"
        cases.append(call(x, alpha, tag="x_a", label=label, group=group))
        cases.append(call(alpha * x, 1.0, tag="ax_1", label=label, group=group))
        cases.append(call(x, 1.0, tag="x_1", label=label, group=group))
    return cases


def _elementwise(rng, hidden: bool) -> list:
    shapes = [(3, 4, 6)] + ([(2, 5), (1, 1, 8)] if hidden else [])
    cases = []
    for shape in shapes:
        x = _x(rng, shape, 0.5)
        gamma, beta = _affine(rng, shape[-1])
        index = tuple(int(rng.integers(n)) for n in shape)
        moved = x.copy()
        moved[index] += 3.0
        cases.append(call(x, 0.5, gamma, beta, tag="base"))
        cases.append(call(moved, 0.5, gamma, beta, tag="moved", index=index))
    return cases


def _gain_and_bias(rng, hidden: bool) -> list:
    shapes = [(3, 4)] + ([(2, 3, 5), (6, 6)] if hidden else [])
    cases = []
    for shape in shapes:
        alpha = float(rng.uniform(0.3, 2.0))
        x = _x(rng, shape, alpha)
        gamma, beta = _affine(rng, shape[-1])
        cases += [call(x, alpha, tag="plain"), call(x, alpha, gamma, beta, tag="affine")]
    return cases


def _plain(setups):
    """make(rng, hidden) calling dyt on (shape, dtype) setups (visible, hidden too)."""

    def make(rng, hidden: bool) -> list:
        cases = []
        for shape, dtype in setups[0] + (setups[1] if hidden else []):
            gamma, beta = _affine(rng, shape[-1])
            x = _x(rng, shape, 0.8).astype(dtype)
            cases.append(call(x, 0.8, gamma.astype(dtype), beta.astype(dtype), tag="plain"))
        return cases

    return make


def _gradients(visible, hidden_too, dtypes=(np.float64,)):
    """make(rng, hidden): dyt_backward on random dy, x, alpha and gamma of both signs."""

    def make(rng, hidden: bool) -> list:
        cases = []
        for shape in visible + (hidden_too if hidden else []):
            for dtype in dtypes:
                alpha = float(rng.uniform(0.3, 2.5))
                gamma, _ = _affine(rng, shape[-1])
                x, dy = _x(rng, shape, alpha), rng.normal(size=shape)
                args = (dy.astype(dtype), x.astype(dtype), alpha, gamma.astype(dtype))
                cases.append(bcall(*args, tag="gradient"))
        return cases

    return make


STANDARD = ([(3, 5), (2, 3, 6)], [(6, 6), (2, 2, 3, 4)])
F32, F64 = np.float32, np.float64
BATTERIES = {
    CELL.dyt_values: _values,
    CELL.dyt_alpha: _alpha,
    CELL.dyt_elementwise: _elementwise,
    CELL.dyt_gain_and_bias: _gain_and_bias,
    CELL.dyt_dtype_and_shape: _plain(([((5, 7), F64), ((2, 3, 6), F32)], [((6, 6), F32)])),
    CELL.dyt_input_untouched: _plain(([((3, 5), F64)], [((2, 3, 4), F64)])),
    CELL.dyt_reference_reuse: _plain(([((3, 5), F64)], [((2, 3, 4), F64)])),
    CELL.dyt_dx_alpha: _gradients(*STANDARD),
    CELL.dyt_dx_tanh: _gradients(*STANDARD),
    CELL.dyt_dalpha_scalar: _gradients(*STANDARD),
    CELL.dyt_dalpha_x: _gradients(*STANDARD),
    CELL.dyt_dgamma: _gradients(*STANDARD),
    CELL.dyt_dbeta: _gradients(*STANDARD),
    CELL.dyt_backward_dtype_and_shape: _gradients([(4, 6)], [(2, 3, 5)], (F64, F32)),
    CELL.dyt_backward_input_untouched: _gradients([(3, 5)], [(2, 3, 4)]),
    CELL.dyt_backward_reference_reuse: _gradients([(3, 5)], [(2, 3, 4)]),
}
