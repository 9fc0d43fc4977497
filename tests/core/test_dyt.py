"""dyt and dyt_backward: torch autograd in float64, hand values, shapes, dtypes, errors.

Dynamic Tanh (Zhu, Chen, He, LeCun and Liu, 2025, arXiv:2503.10622): gamma * tanh(alpha x) + beta.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import normlab
from normlab.dyt import saturated_share

SHAPES = [(7,), (1,), (5, 1), (6, 6), (0, 4), (2, 3, 5), (2, 0, 3), (2, 3, 4, 8)]


def _data(shape, seed=0):
    """Records of very different scales: DyT saturates the large ones, passes the small ones."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape) * 10.0 ** rng.uniform(-2, 1, size=shape[:-1] + (1,))


def _torch_dyt(x, alpha, gamma, beta):
    """The paper's DyT (Algorithm 1), in torch: weight * tanh(alpha * x) + bias."""
    return gamma * torch.tanh(alpha * x) + beta


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("alpha", [0.5, 2.0, -0.3])
def test_dyt_matches_torch(shape, alpha):
    x = _data(shape)
    rng = np.random.default_rng(1)
    gamma, beta = rng.normal(size=shape[-1]), rng.normal(size=shape[-1])
    ours = normlab.dyt(x, alpha, gamma, beta)
    theirs = _torch_dyt(torch.from_numpy(x), alpha, torch.from_numpy(gamma), torch.from_numpy(beta))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=0, atol=1e-15)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("with_gamma", [True, False])
def test_dyt_backward_matches_autograd(shape, with_gamma):
    x = _data(shape)
    rng = np.random.default_rng(2)
    dy = rng.normal(size=shape)
    d = shape[-1]
    gamma = rng.normal(size=d) if with_gamma else None
    alpha = 0.7
    tx = torch.from_numpy(x).requires_grad_()
    ta = torch.tensor(alpha, dtype=torch.float64, requires_grad=True)
    tg = torch.from_numpy(np.ones(d) if gamma is None else gamma).requires_grad_()
    tb = torch.zeros(d, dtype=torch.float64, requires_grad=True)
    _torch_dyt(tx, ta, tg, tb).backward(torch.from_numpy(dy))

    dx, dalpha, dgamma, dbeta = normlab.dyt_backward(dy, x, alpha, gamma)
    assert dx.shape == shape and dgamma.shape == dbeta.shape == (d,)
    assert np.ndim(dalpha) == 0
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(float(dalpha), ta.grad.item(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dgamma, tg.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dbeta, tb.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_hand_values():
    # tanh(0.5 * 1) = 0.46211715726000974; tanh(0.5 * -2) = -tanh(1) = -0.7615941559557649
    y = normlab.dyt([1.0, -2.0, 0.0], 0.5)
    np.testing.assert_allclose(y, [0.46211715726000974, -0.7615941559557649, 0.0], rtol=1e-15)
    # gamma 2 doubles, beta 1 shifts, feature by feature
    y = normlab.dyt([1.0, 1.0], 0.5, gamma=[2.0, 1.0], beta=[0.0, 1.0])
    np.testing.assert_allclose(y, [2 * math.tanh(0.5), math.tanh(0.5) + 1], rtol=1e-15)


def test_backward_hand_values():
    # one element, x = 1, alpha = 0.5, gamma = 2, dy = 3; t = tanh(0.5), 1 - t^2 = sech(0.5)^2
    t = math.tanh(0.5)
    dx, dalpha, dgamma, dbeta = normlab.dyt_backward([3.0], [1.0], 0.5, [2.0])
    assert float(dx[0]) == pytest.approx(3 * 2 * 0.5 * (1 - t * t), rel=1e-15)
    assert float(dalpha) == pytest.approx(3 * 2 * 1.0 * (1 - t * t), rel=1e-15)
    assert dgamma.tolist() == pytest.approx([3 * t], rel=1e-15)
    assert dbeta.tolist() == [3.0]


def test_dalpha_sums_every_element_and_dgamma_every_leading_axis():
    x, dy = _data((3, 4, 5)), _data((3, 4, 5), seed=9)
    _, dalpha, dgamma, dbeta = normlab.dyt_backward(dy, x, 1.3)
    parts = [normlab.dyt_backward(dy[i, j], x[i, j], 1.3) for i in range(3) for j in range(4)]
    assert float(dalpha) == pytest.approx(sum(float(p[1]) for p in parts), rel=1e-12)
    np.testing.assert_allclose(dgamma, sum(p[2] for p in parts), rtol=1e-12)
    np.testing.assert_allclose(dbeta, dy.sum(axis=(0, 1)), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_dtype_rule(dtype):
    x = _data((4, 6)).astype(dtype)
    assert normlab.dyt(x, 0.5, np.ones(6), np.zeros(6)).dtype == dtype
    grads = normlab.dyt_backward(np.ones_like(x), x, 0.5, np.ones(6))
    assert all(g.dtype == dtype for g in grads)


def test_integers_and_lists_compute_in_float64():
    assert normlab.dyt([[1, 2, 3]], 1).dtype == np.float64


def test_float32_agrees_with_float64():
    x = _data((16, 32))
    y32 = normlab.dyt(x.astype(np.float32), 0.5)
    np.testing.assert_allclose(y32, normlab.dyt(x, 0.5), rtol=0, atol=1e-6)


@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
        elements=st.floats(-1e3, 1e3),
    ),
    st.floats(-5, 5),
)
@settings(max_examples=50, deadline=None)
def test_nothing_is_written_into(x, alpha):
    d = x.shape[-1]
    gamma, beta, dy = np.full(d, 1.5), np.full(d, -0.5), np.ones_like(x)
    copies = [a.copy() for a in (x, gamma, beta, dy)]
    normlab.dyt(x, alpha, gamma, beta)
    normlab.dyt_backward(dy, x, alpha, gamma)
    for before, after in zip(copies, (x, gamma, beta, dy), strict=True):
        np.testing.assert_array_equal(before, after)


@given(hnp.arrays(np.float64, (3, 4), elements=st.floats(-1e6, 1e6)), st.floats(0.01, 10))
@settings(max_examples=50, deadline=None)
def test_outputs_are_bounded_by_gamma_plus_beta(x, alpha):
    gamma, beta = np.array([1.0, 2.0, 0.5, 3.0]), np.array([0.0, 1.0, -1.0, 0.0])
    y = normlab.dyt(x, alpha, gamma, beta)
    assert np.all(np.abs(y - beta) <= np.abs(gamma))


def test_alpha_of_one_element_is_accepted_as_the_papers_code_keeps_it():
    x = _data((2, 3))
    np.testing.assert_array_equal(normlab.dyt(x, np.array([0.5])), normlab.dyt(x, 0.5))


@pytest.mark.parametrize(
    "alpha, error, words",
    [
        (np.array([0.5, 0.5, 0.5]), ValueError, "alpha has shape (3,)"),
        (np.ones((1, 2)), ValueError, "one number shared by every feature"),
        (float("nan"), ValueError, "alpha must be finite"),
        ("0.5", TypeError, "alpha must be a real number"),
        (True, TypeError, "alpha must be a real number"),
    ],
)
def test_bad_alpha_is_named(alpha, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        normlab.dyt(np.ones((2, 3)), alpha)
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        normlab.dyt_backward(np.ones((2, 3)), np.ones((2, 3)), alpha)


def test_bad_gamma_beta_and_dy_are_named():
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"gamma has shape \(2,\).*d = 3"):
        normlab.dyt(x, 0.5, gamma=np.ones(2))
    with pytest.raises(ValueError, match=r"beta has shape \(3, 1\)"):
        normlab.dyt(x, 0.5, beta=np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"gamma has shape \(4,\)"):
        normlab.dyt_backward(x, x, 0.5, gamma=np.ones(4))
    with pytest.raises(ValueError, match=r"dy has shape \(3, 2\) but x has shape \(2, 3\)"):
        normlab.dyt_backward(np.ones((3, 2)), x, 0.5)
    with pytest.raises(ValueError, match="0-d scalar"):
        normlab.dyt(1.0, 0.5)


def test_saturated_share_counts_beyond_the_bound():
    x = np.array([[-5.0, -3.0, 0.0, 1.0, 4.5]])
    # |0.5 x| = 2.5, 1.5, 0, 0.5, 2.25: two of five beyond 2
    assert saturated_share(x, 0.5) == pytest.approx(0.4)
    assert saturated_share(x, 0.5, bound=1.0) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="bound must be a positive number"):
        saturated_share(x, 0.5, bound=0)
