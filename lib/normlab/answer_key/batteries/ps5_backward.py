"""ps5_backward's batteries: layer_norm_backward's cases (Ba, Kiros and Hinton, 2016), and the
cases of the dtype_and_shape and input_untouched cells (`normlab.grading.gradients`) that ps7's
batch_norm_backward shares."""

from __future__ import annotations

import numpy as np

from ...grading.gradients import call, x_hat
from ...grading.ps5_backward import CHECKS, FUNCTION, bcall
from ..live import LIVE
from ..random_inputs import each, messy, signed_gain


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


def dtype_case(rng, setup, function: str):
    """A call of a backward's dtype_and_shape cell on a (shape, dtype) setup."""
    shape, dtype = setup
    dy, x = rng.normal(size=shape), messy(rng, shape, spread=(0.5, 5))
    return call(function, dy.astype(dtype), x.astype(dtype), None, tag="dt")


def untouched_case(rng, shape, function: str):
    """A call of a backward's input_untouched cell."""
    dy, x, gamma = rng.normal(size=shape), messy(rng, shape), rng.uniform(0.5, 2, shape[-1])
    return call(function, dy, x, gamma, tag="io")


def _standard_case(rng, shape):
    x = messy(rng, shape, spread=(2.0, 40.0))
    gamma = signed_gain(rng, shape[-1])
    return bcall(rng.normal(size=shape), x, gamma, tag="standard")


_standard = each(_standard_case, [(3, 5), (2, 3, 6)], [(6, 6), (2, 2, 3, 4)])


def _gamma_cases(rng, hidden):
    cases = []
    for pair, case in enumerate(_standard(rng, hidden)):
        dy, x, gamma = case.args[:3]
        cases.append(bcall(dy, x, gamma, tag="gamma", pair=pair, label=case.label))
        cases.append(bcall(dy * gamma, x, None, tag="folded", pair=pair, label=case.label))
    return cases


def _scale_case(rng, shape):
    x = messy(rng, shape, spread=(2.0, 40.0))
    return bcall(orthogonal_dy(rng, x, 1e-5), x, None, tag="scale")


def _eps_cases(rng, hidden):
    tiny = rng.uniform(-5, 5, (3, 1)) + 1e-3 * rng.standard_normal((3, 6))  # var ~1e-6
    block = np.concatenate([tiny, messy(rng, (2, 6), spread=(0.5, 5.0))])
    specs = [(block, None), (messy(rng, (3, 4), spread=(0.05, 0.2)), 0.1)]
    if hidden:
        specs += [(block * 10.0, 1e-3), (block.reshape(1, *block.shape), None)]
    cases = []
    for x, eps in specs:
        dy = orthogonal_dy(rng, x, 1e-5 if eps is None else eps)
        label = "records of variance about 1e-6" if eps is None and x is block else ""
        cases.append(bcall(dy, x, None, eps, tag="eps", label=label))
    return cases


def _independence(rng, shape, block: int):
    x, dy = messy(rng, shape), rng.normal(size=shape)
    cases = [bcall(dy, x, None, tag="base", block=block, label=f"x of shape {shape}")]
    b, t, d = shape
    for target in ((0, t - 1), (b - 1, 0)):
        x2, dy2 = x.copy(), dy.copy()
        x2[target] = x2[target] * 7.0 + 10.0 * np.arange(d)
        dy2[target] = dy2[target][::-1] * 3.0
        cases.append(bcall(dy2, x2, None, tag="changed", block=block, record=target))
    return cases


BATTERIES = {
    CHECKS.cell.dbeta: _standard,
    CHECKS.cell.dgamma: _standard,
    CHECKS.cell.dx_mean_term: _standard,
    CHECKS.cell.dx_variance_term: _standard,
    CHECKS.cell.dx_gamma: _gamma_cases,
    CHECKS.cell.dx_scale: each(_scale_case, [(3, 5), (2, 3, 6)], [(5, 5), (2, 2, 2, 7)]),
    CHECKS.cell.eps_placement: _eps_cases,
    CHECKS.cell.independence: each(_independence, [(2, 3, 5)], [(3, 2, 4)], number="block"),
    CHECKS.cell.dtype_and_shape: each(
        dtype_case,
        [((4, 6), np.float64), ((2, 3, 5), np.float32)],
        [((2, 2, 2, 4), np.float64), ((5, 5), np.float32)],
        function=FUNCTION,
    ),
    CHECKS.cell.input_untouched: each(untouched_case, [(3, 5)], [(2, 3, 4)], function=FUNCTION),
    CHECKS.cell.reference_reuse: _standard,
}
