"""The staged backward pass: every stage's local gradient against torch float64 autograd and
against central differences, and the walk of all six against the closed form."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import normlab
from normlab.backward_stages import (
    STAGES,
    Centre,
    InverseStd,
    Mean,
    ScaleShift,
    Variance,
    XHat,
    stage_gradient_errors,
    staged_layer_norm_backward,
)

EPS = 1e-5


def _record_values(shape=(2, 3, 5), seed=0):
    """Every intermediate value of the forward pass on one random batch, in float64."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape) * 3.0 + 1.0
    mu = Mean.forward(x)
    xc = Centre.forward(x, mu)
    var = Variance.forward(xc)
    inv_std = InverseStd.forward(var, EPS)
    x_hat = XHat.forward(xc, inv_std)
    gamma, beta = rng.uniform(0.5, 2.0, shape[-1]), rng.normal(size=shape[-1])
    return dict(x=x, mu=mu, xc=xc, var=var, inv_std=inv_std, x_hat=x_hat, gamma=gamma, beta=beta)


# each stage written again in torch, independently of normlab, on its named inputs
TORCH_FORWARD = {
    Mean: lambda x: x.mean(-1, keepdim=True),
    Centre: lambda x, mu: x - mu,
    Variance: lambda xc: (xc * xc).mean(-1, keepdim=True),
    InverseStd: lambda var: torch.rsqrt(var + EPS),
    XHat: lambda xc, inv_std: xc * inv_std,
    ScaleShift: lambda x_hat, gamma, beta: gamma * x_hat + beta,
}


def _stage_inputs(stage, values):
    inputs = {name: values[name] for name in stage.inputs}
    return inputs | ({"eps": EPS} if stage is InverseStd else {})


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.__name__)
def test_each_local_gradient_matches_torch_autograd(stage):
    values = _record_values()
    inputs = _stage_inputs(stage, values)
    out = stage.forward(**inputs)
    upstream = np.random.default_rng(7).normal(size=out.shape)
    leaves = {n: torch.from_numpy(values[n]).requires_grad_() for n in stage.inputs}
    TORCH_FORWARD[stage](**leaves).backward(torch.from_numpy(upstream))
    for name, ours in zip(stage.inputs, stage.backward(upstream, **inputs), strict=True):
        assert ours.shape == values[name].shape, name
        np.testing.assert_allclose(ours, leaves[name].grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.__name__)
def test_each_local_gradient_passes_the_central_difference_check(stage):
    values = _record_values()
    inputs = _stage_inputs(stage, values)
    upstream = np.random.default_rng(8).normal(size=stage.forward(**inputs).shape)
    errors = stage_gradient_errors(stage, upstream, **inputs)
    assert set(errors) == set(stage.inputs)
    assert max(errors.values()) < 1e-7, errors


def test_the_check_catches_a_wrong_local_gradient():
    """The judge is not vacuous: a variance stage that divides by d - 1 is caught."""

    class SampleVariance(Variance):
        @staticmethod
        def backward(d_var, xc):
            return (d_var * 2.0 * xc / (xc.shape[-1] - 1),)

    values = _record_values()
    upstream = np.ones(values["var"].shape)
    assert stage_gradient_errors(SampleVariance, upstream, xc=values["xc"])["xc"] > 1e-2


@pytest.mark.parametrize("shape", [(7,), (1,), (4, 6), (2, 3, 5), (2, 3, 4, 8)])
@pytest.mark.parametrize("with_gamma", [True, False])
@pytest.mark.parametrize("eps", [1e-5, 0.5])
def test_the_walk_equals_the_closed_form_and_autograd(shape, with_gamma, eps):
    rng = np.random.default_rng(3)
    x = rng.normal(size=shape) * 10.0 ** rng.uniform(-2, 2, size=shape[:-1] + (1,))
    dy = rng.normal(size=shape)
    gamma = rng.normal(size=shape[-1]) if with_gamma else None
    staged = staged_layer_norm_backward(dy, x, gamma, eps=eps)
    closed = normlab.layer_norm_backward(dy, x, gamma, eps=eps)
    for a, b in zip(staged, closed, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    tx = torch.from_numpy(x).requires_grad_()
    tg = torch.from_numpy(gamma if with_gamma else np.ones(shape[-1])).requires_grad_()
    tb = torch.zeros(shape[-1], dtype=torch.float64, requires_grad=True)
    F.layer_norm(tx, shape[-1:], tg, tb, eps=eps).backward(torch.from_numpy(dy))
    for ours, leaf in zip(staged, (tx, tg, tb), strict=True):
        np.testing.assert_allclose(ours, leaf.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_the_walk_follows_the_dtype_rule_and_the_checks_of_the_closed_form():
    x32 = np.random.default_rng(4).normal(size=(3, 8)).astype(np.float32)
    dx, dgamma, dbeta = staged_layer_norm_backward(np.ones_like(x32), x32)
    assert dx.dtype == dgamma.dtype == dbeta.dtype == np.float32
    with pytest.raises(ValueError, match=r"dy has shape \(2, 3\) but x has shape \(2, 4\)"):
        staged_layer_norm_backward(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"gamma has shape \(3,\)"):
        staged_layer_norm_backward(np.ones((2, 4)), np.ones((2, 4)), gamma=np.ones(3))


def test_dx_sums_to_zero_for_any_eps_but_is_orthogonal_to_x_hat_only_at_eps_zero():
    """Shift invariance holds with eps; scale invariance, hence dx . x_hat = 0, needs eps = 0:
    sum_j dx_j x_hat_j = eps / (var + eps) * sum_j g_j x_hat_j / sigma (chapter 10)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 16)) * np.array([[1e-3], [1e-2], [1.0], [30.0]])
    dy = rng.normal(size=x.shape)
    along = {}
    for eps in (0.0, 1e-5, 1e-2):
        dx, _, _ = normlab.layer_norm_backward(dy, x, eps=eps)
        np.testing.assert_allclose(dx.sum(-1), 0.0, atol=1e-9)
        var = x.var(-1)
        x_hat = (x - x.mean(-1, keepdims=True)) / np.sqrt(var + eps)[:, None]
        predicted = eps / (var + eps) * (dy * x_hat).sum(-1) / np.sqrt(var + eps)
        along[eps] = (dx * x_hat).sum(-1)
        np.testing.assert_allclose(along[eps], predicted, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(along[0.0], 0.0, atol=1e-9)  # orthogonal up to rounding
    assert abs(along[1e-2][0]) > 1e-3  # a record of variance 1e-6 under eps = 1e-2: far from it
