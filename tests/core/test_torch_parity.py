"""Parity with PyTorch in float64: the trusted reference for every forward and backward pass."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import normlab
from normlab.gradcheck import numerical_gradient, numerical_norm_gradients
from normlab.rms_norm import rms_norm_eps_outside

# PyTorch-OpInfo-like shapes: rank 1 to 4, d = 1, an empty batch, square (rows == d)
SHAPES = [(7,), (1,), (5, 1), (6, 6), (0, 4), (2, 3, 5), (2, 0, 3), (2, 3, 4, 8), (1, 1, 16)]


def _data(shape, seed=0):
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-2, 3, size=shape[:-1] + (1,))
    return rng.normal(size=shape) * scale + rng.normal(size=shape[:-1] + (1,)) * 50


def _params(d, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=d), rng.normal(size=d)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [1e-5, 1e-2, 0.25])
def test_layer_norm_matches_torch(shape, eps):
    x = _data(shape)
    gamma, beta = _params(shape[-1])
    ours = normlab.layer_norm(x, gamma, beta, eps=eps)
    theirs = F.layer_norm(
        torch.from_numpy(x), shape[-1:], torch.from_numpy(gamma), torch.from_numpy(beta), eps=eps
    ).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


@pytest.mark.parametrize("shape", SHAPES)
def test_row_stats_match_torch(shape):
    x = _data(shape)
    mean, var = normlab.row_stats(x)
    t = torch.from_numpy(x)
    assert mean.shape == var.shape == shape[:-1]
    np.testing.assert_allclose(mean, t.mean(-1).numpy(), rtol=1e-12, atol=1e-10)
    # torch.var warns on an empty batch, so spell out the population variance in torch
    torch_var = ((t - t.mean(-1, keepdim=True)) ** 2).mean(-1)
    np.testing.assert_allclose(var, torch_var.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [1e-6, 1e-3])
def test_rms_norm_matches_torch(shape, eps):
    x = _data(shape)
    gamma, _ = _params(shape[-1])
    ours = normlab.rms_norm(x, gamma, eps=eps)
    theirs = F.rms_norm(torch.from_numpy(x), shape[-1:], torch.from_numpy(gamma), eps=eps)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=0, atol=1e-10)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [1e-8, 1e-3])
def test_rms_norm_eps_outside_matches_zhang_and_sennrichs_torch_code(shape, eps):
    x = _data(shape)
    gamma, _ = _params(shape[-1])
    t = torch.from_numpy(x)
    # rmsnorm_torch.py (Zhang and Sennrich, 2019): x / (||x||_2 d^(-1/2) + eps), times the scale
    rms = t.norm(2, dim=-1, keepdim=True) * shape[-1] ** (-1.0 / 2)
    theirs = torch.from_numpy(gamma) * (t / (rms + eps))
    ours = rms_norm_eps_outside(x, gamma, eps=eps)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=0, atol=1e-10)


@pytest.mark.parametrize("shape", [(5, 3), (8, 8), (2, 3, 4), (3, 2, 2, 6)])
def test_batch_norm_matches_torch_training_mode(shape):
    x = _data(shape)
    gamma, beta = _params(shape[-1])
    flat = torch.from_numpy(x.reshape(-1, shape[-1]))
    theirs = F.batch_norm(
        flat, None, None, torch.from_numpy(gamma), torch.from_numpy(beta), training=True, eps=1e-5
    )
    ours = normlab.batch_norm(x, gamma, beta)
    np.testing.assert_allclose(ours, theirs.numpy().reshape(shape), rtol=0, atol=1e-10)


@pytest.mark.parametrize("shape", [(7,), (1,), (4, 6), (6, 6), (2, 3, 5), (2, 3, 4, 8)])
@pytest.mark.parametrize("with_gamma", [True, False])
def test_backward_matches_autograd(shape, with_gamma):
    x = _data(shape)
    dy = np.random.default_rng(2).normal(size=shape)
    gamma = _params(shape[-1])[0] if with_gamma else None
    tx = torch.from_numpy(x).requires_grad_()
    tg = torch.from_numpy(gamma if with_gamma else np.ones(shape[-1])).requires_grad_()
    tb = torch.zeros(shape[-1], dtype=torch.float64, requires_grad=True)
    F.layer_norm(tx, shape[-1:], tg, tb, eps=1e-5).backward(torch.from_numpy(dy))
    dx, dgamma, dbeta = normlab.layer_norm_backward(dy, x, gamma)
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dgamma, tg.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dbeta, tb.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_backward_matches_finite_differences():
    rng = np.random.default_rng(3)
    x, dy = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    gamma, beta = _params(5)

    ours = normlab.layer_norm_backward(dy, x, gamma)
    numeric = numerical_norm_gradients(normlab.layer_norm, dy, x, gamma, beta)
    for name, grad, fd in zip(("dx", "dgamma", "dbeta"), ours, numeric, strict=True):
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7, err_msg=name)


def test_numerical_gradient_of_a_known_function():
    a = np.array([[1.0, -2.0], [0.5, 3.0]])
    grad = numerical_gradient(lambda v: float(np.sum(v**3)), a)
    np.testing.assert_allclose(grad, 3 * a**2, rtol=1e-8)
    np.testing.assert_array_equal(a, [[1.0, -2.0], [0.5, 3.0]])  # input untouched


def test_batch_norm_module_tracks_running_statistics_like_torch():
    rng = np.random.default_rng(4)
    ours = normlab.BatchNorm(6, momentum=0.1)
    theirs = torch.nn.BatchNorm1d(6, momentum=0.1, dtype=torch.float64)
    for _ in range(4):
        batch = rng.normal(loc=3.0, scale=2.0, size=(10, 6))
        np.testing.assert_allclose(
            ours(batch), theirs(torch.from_numpy(batch)).detach().numpy(), atol=1e-10
        )
    np.testing.assert_allclose(ours.running_mean, theirs.running_mean.numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.running_var, theirs.running_var.numpy(), atol=1e-12)
    assert ours.num_batches_tracked == int(theirs.num_batches_tracked)
    ours.eval()
    theirs.eval()
    single = rng.normal(size=(1, 6))  # a batch of one works at inference, with running statistics
    np.testing.assert_allclose(
        ours(single), theirs(torch.from_numpy(single)).detach().numpy(), atol=1e-10
    )


def test_batch_norm_cumulative_average_like_torch():
    rng = np.random.default_rng(5)
    ours = normlab.BatchNorm(3, momentum=None)
    theirs = torch.nn.BatchNorm1d(3, momentum=None, dtype=torch.float64)
    for _ in range(3):
        batch = rng.normal(size=(4, 3))
        ours(batch)
        theirs(torch.from_numpy(batch))
    np.testing.assert_allclose(ours.running_var, theirs.running_var.numpy(), atol=1e-12)
