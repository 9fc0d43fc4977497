"""batch_norm_backward: torch autograd in float64, finite differences, its structure, its errors.

Batch-norm (Ioffe and Szegedy, 2015) is LayerNorm (Ba, Kiros and Hinton, 2016) of the transposed
(records, features) block, so its backward pass is LayerNorm's with the means over the batch.
"""

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import normlab
from normlab.gradcheck import numerical_norm_gradients

RANKS_2_3_4 = [(5, 3), (8, 8), (2, 1), (2, 3, 4), (4, 1, 6), (3, 2, 2, 6)]


def _data(shape, seed=0):
    """Features of very different scales and offsets: batch-norm's statistics are per feature."""
    rng = np.random.default_rng(seed)
    d = shape[-1]
    return rng.normal(size=shape) * 10.0 ** rng.uniform(-2, 3, size=d) + rng.normal(size=d) * 50


def _torch_grads(dy, x, gamma, eps):
    """(dx, dgamma, dbeta) of F.batch_norm in training mode, by autograd in float64."""
    d = x.shape[-1]
    tx = torch.from_numpy(x).requires_grad_()
    tg = torch.from_numpy(np.ones(d) if gamma is None else gamma).requires_grad_()
    tb = torch.zeros(d, dtype=torch.float64, requires_grad=True)
    y = F.batch_norm(tx.reshape(-1, d), None, None, tg, tb, training=True, eps=eps)
    y.backward(torch.from_numpy(dy).reshape(-1, d))
    return tx.grad.numpy(), tg.grad.numpy(), tb.grad.numpy()


@pytest.mark.parametrize("shape", RANKS_2_3_4)
@pytest.mark.parametrize("with_gamma", [True, False])
@pytest.mark.parametrize("eps", [1e-5, 0.25])
def test_batch_norm_backward_matches_autograd(shape, with_gamma, eps):
    x = _data(shape)
    rng = np.random.default_rng(2)
    dy = rng.normal(size=shape)
    gamma = rng.normal(size=shape[-1]) if with_gamma else None
    dx, dgamma, dbeta = normlab.batch_norm_backward(dy, x, gamma, eps=eps)
    t_dx, t_dgamma, t_dbeta = _torch_grads(dy, x, gamma, eps)
    assert dx.shape == shape and dgamma.shape == dbeta.shape == shape[-1:]
    np.testing.assert_allclose(dx, t_dx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dgamma, t_dgamma, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dbeta, t_dbeta, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 4), (2, 2, 2, 3)])
def test_batch_norm_backward_matches_finite_differences(shape):
    rng = np.random.default_rng(3)
    x, dy = rng.normal(size=shape) * 2.0 + 1.0, rng.normal(size=shape)
    gamma, beta = rng.normal(size=shape[-1]), rng.normal(size=shape[-1])

    ours = normlab.batch_norm_backward(dy, x, gamma)
    numeric = numerical_norm_gradients(normlab.batch_norm, dy, x, gamma, beta)
    for name, grad, fd in zip(("dx", "dgamma", "dbeta"), ours, numeric, strict=True):
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7, err_msg=name)


# -- structure, whatever the data -------------------------------------------------------------

values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_subnormal=False)
batches = hnp.arrays(
    np.float64,
    hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=5).filter(
        lambda s: np.prod(s[:-1]) >= 2
    ),
    elements=values,
).filter(lambda x: bool(np.all(x.reshape(-1, x.shape[-1]).std(axis=0) >= 1.0)))


def _upstream(x, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=x.shape), rng.uniform(0.5, 2.0, size=x.shape[-1])


@settings(max_examples=60, deadline=None)
@given(batches, st.integers(0, 2**16))
def test_dx_sums_to_zero_over_the_batch_for_every_feature(x, seed):
    dy, gamma = _upstream(x, seed)
    dx, _, _ = normlab.batch_norm_backward(dy, x, gamma)
    lead = tuple(range(x.ndim - 1))
    # each term of dx is at most about |g| / sigma <= 2 |dy| (sigma >= 1), summed over n records
    scale = np.abs(dy).sum(axis=lead) * 4
    assert np.all(np.abs(dx.sum(axis=lead)) <= 1e-12 * scale + 1e-300)


@settings(max_examples=60, deadline=None)
@given(batches, st.integers(0, 2**16))
def test_dbeta_is_dy_summed_over_the_leading_axes(x, seed):
    dy, gamma = _upstream(x, seed)
    _, _, dbeta = normlab.batch_norm_backward(dy, x, gamma)
    np.testing.assert_allclose(dbeta, dy.sum(axis=tuple(range(x.ndim - 1))), rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(batches, st.integers(0, 2**16))
def test_it_is_layer_norm_backward_of_the_transposed_block(x, seed):
    """The same formula over the other axis: feature j's n values are one LayerNorm record."""
    dy, gamma = _upstream(x, seed)
    d = x.shape[-1]
    flat, flat_dy = x.reshape(-1, d), dy.reshape(-1, d)  # (n, d)
    dx, dgamma, dbeta = normlab.batch_norm_backward(dy, x, gamma)
    dx_t, _, _ = normlab.layer_norm_backward((flat_dy * gamma).T, flat.T)  # records: (d, n)
    np.testing.assert_allclose(dx.reshape(-1, d), dx_t.T, rtol=1e-9, atol=1e-12)
    x_hat = normlab.batch_norm(flat)  # (n, d)
    np.testing.assert_allclose(dgamma, (flat_dy * x_hat).sum(axis=0), rtol=1e-9, atol=1e-9)


# -- dtypes and errors, as layer_norm_backward ------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 4), (3, 2, 4), (2, 2, 3, 4)])
def test_float32_in_float32_out(shape):
    x = np.random.default_rng(4).normal(size=shape) * 3.0 + 2.0
    dy, gamma = _upstream(x, 5)
    exact = normlab.batch_norm_backward(dy, x, gamma)
    single = normlab.batch_norm_backward(
        dy.astype(np.float32), x.astype(np.float32), gamma.astype(np.float32)
    )
    for ours, reference in zip(single, exact, strict=True):
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-5)


def test_the_dtype_rule_of_layer_norm_backward():
    x = np.arange(12).reshape(4, 3) % 5
    assert all(a.dtype == np.float64 for a in normlab.batch_norm_backward(np.ones((4, 3)), x))
    half = normlab.batch_norm_backward(np.ones((4, 3), np.float16), x.astype(np.float16))
    assert all(a.dtype == np.float16 for a in half)


def test_the_inputs_are_never_modified():
    x, dy, gamma = np.ones((3, 4)) * np.arange(3)[:, None], np.full((3, 4), 2.0), np.full(4, 3.0)
    before = (x.copy(), dy.copy(), gamma.copy())
    normlab.batch_norm_backward(dy, x, gamma)
    for now, then in zip((x, dy, gamma), before, strict=True):
        np.testing.assert_array_equal(now, then)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda f: f(np.ones((2, 3)), np.ones((2, 4))), ValueError, None),
        (lambda f: f(np.ones((2, 4)), np.ones((2, 4)), np.ones(3)), ValueError, None),
        (lambda f: f(np.ones((2, 4)), np.ones((2, 4)), eps=-1.0), ValueError, None),
        (lambda f: f(np.ones((2, 4)), np.ones((2, 4)), eps=True), TypeError, None),
        (lambda f: f(np.ones((2, 2)), np.array([["a", "b"], ["c", "d"]])), TypeError, None),
        (lambda f: f(np.ones(0), np.ones((2, 0))), ValueError, "d = 0"),
    ],
)
def test_bad_input_gets_layer_norm_backwards_words(call, error, message):
    with pytest.raises(error) as ours:
        call(normlab.batch_norm_backward)
    with pytest.raises(error) as theirs:
        call(normlab.layer_norm_backward)
    assert str(ours.value) == str(theirs.value)
    assert message is None or message in str(ours.value)


def test_eps_zero_on_a_feature_constant_over_the_batch_names_the_feature():
    x = np.array([[[1.0, 2.0, 5.0]], [[1.5, 2.0, 6.0]]])  # (2, 1, 3): feature 1 is constant
    expected = "feature 1 has zero variance over the batch and eps = 0: batch-norm is undefined"
    with pytest.raises(ValueError, match=re.escape(expected)):
        normlab.batch_norm_backward(np.ones(x.shape), x, eps=0.0)
    assert np.isfinite(normlab.batch_norm_backward(np.ones(x.shape), x)[0]).all()


@pytest.mark.parametrize("shape", [(5,), (1, 5), (1, 1, 5), (0, 5)])
def test_one_record_per_feature_is_refused_as_the_forward_pass_refuses_it(shape):
    with pytest.raises(ValueError, match=r"batch_norm_backward in training mode .* needs a crowd"):
        normlab.batch_norm_backward(np.ones(shape), np.ones(shape))
    with pytest.raises(ValueError, match="needs a crowd"):
        normlab.batch_norm(np.ones(shape))
