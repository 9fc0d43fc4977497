"""normlab.batch_norm_forward against torch.nn.BatchNorm1d in float64 (Ioffe and Szegedy,
2015, arXiv:1502.03167; torch's convention: population variance to normalize, unbiased
variance into running_var), and the properties ps3 Part C grades."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import normlab


def _torch_step(x, gamma, beta, running_mean, running_var, momentum, training):
    """torch's BatchNorm1d on `x` (..., d), features last: (y, running_mean, running_var)."""
    d = x.shape[-1]
    module = torch.nn.BatchNorm1d(d, momentum=momentum, dtype=torch.float64)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(gamma))
        module.bias.copy_(torch.from_numpy(beta))
        module.running_mean.copy_(torch.from_numpy(running_mean))
        module.running_var.copy_(torch.from_numpy(running_var))
    module.train(training)
    t = torch.from_numpy(x)
    # BatchNorm1d takes (N, C) or (N, C, L): put the features second
    y = module(t) if t.ndim == 2 else module(t.movedim(-1, 1)).movedim(1, -1)
    return y.detach().numpy(), module.running_mean.numpy(), module.running_var.numpy()


@pytest.mark.parametrize("shape", [(8, 5), (3, 4, 5)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("momentum", [0.1, 0.7])
def test_one_step_matches_torch_batchnorm1d_in_float64(shape, training, momentum):
    rng = np.random.default_rng(sum(shape))
    x = rng.normal(loc=2.0, scale=3.0, size=shape)
    gamma, beta = rng.uniform(0.5, 2.0, 5), rng.normal(size=5)
    running_mean, running_var = rng.normal(size=5), rng.uniform(0.5, 2.0, 5)
    ours = normlab.batch_norm_forward(
        x, gamma, beta, running_mean, running_var, momentum=momentum, training=training
    )
    theirs = _torch_step(x, gamma, beta, running_mean, running_var, momentum, training)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_training_keeps_the_unbiased_variance_and_normalizes_with_the_population_one():
    x = np.array([[1.0], [2.0], [3.0], [4.0]])  # mean 2.5, population variance 1.25
    y, mean, var = normlab.batch_norm_forward(x, None, None, [0.0], [1.0], momentum=1.0, eps=0.0)
    np.testing.assert_allclose(mean, [2.5])
    np.testing.assert_allclose(var, [5.0 / 3.0])  # unbiased: 5 / (4 - 1)
    np.testing.assert_allclose(y[:, 0], [-1.341640786, -0.447213595, 0.447213595, 1.341640786])


def test_momentum_moves_the_running_statistics_a_fraction_toward_the_batch():
    x = np.array([[0.0], [2.0]])  # batch mean 1, unbiased variance 2
    _, mean, var = normlab.batch_norm_forward(x, None, None, [10.0], [4.0], momentum=0.25)
    np.testing.assert_allclose(mean, [0.75 * 10 + 0.25 * 1])
    np.testing.assert_allclose(var, [0.75 * 4 + 0.25 * 2])


def test_eval_uses_the_running_statistics_and_returns_them_unchanged():
    x = np.array([[5.0, -1.0]])  # a batch of one works at inference
    y, mean, var = normlab.batch_norm_forward(
        x, None, None, [1.0, 1.0], [4.0, 1.0], training=False, eps=0.0
    )
    np.testing.assert_allclose(y, [[2.0, -2.0]])
    np.testing.assert_array_equal(mean, [1.0, 1.0])
    np.testing.assert_array_equal(var, [4.0, 1.0])


def test_no_argument_is_written_into_and_the_statistics_come_back_new():
    rng = np.random.default_rng(1)
    args = [rng.normal(size=(6, 3)), np.ones(3), np.zeros(3), np.zeros(3), np.ones(3)]
    kept = [a.copy() for a in args]
    for training in (True, False):
        _, mean, var = normlab.batch_norm_forward(*args, training=training)
        assert mean is not args[3] and var is not args[4]
        mean += 1.0  # the caller may write into what it got back
        var += 1.0
        for a, b in zip(args, kept, strict=True):
            np.testing.assert_array_equal(a, b)


def test_a_batch_of_one_record_raises_in_training_only():
    x = np.ones((1, 1, 4))
    with pytest.raises(ValueError, match="needs more than one record"):
        normlab.batch_norm_forward(x, None, None, np.zeros(4), np.ones(4))
    y, _, _ = normlab.batch_norm_forward(x, None, None, np.zeros(4), np.ones(4), training=False)
    assert y.shape == (1, 1, 4)


def test_dtype_and_shape_follow_the_input():
    x = np.random.default_rng(2).normal(size=(2, 3, 4)).astype(np.float32)
    y, mean, var = normlab.batch_norm_forward(x, None, None, np.zeros(4), np.ones(4))
    assert y.shape == x.shape and y.dtype == np.float32
    assert mean.shape == var.shape == (4,)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"running_mean": np.zeros(3)}, "running_mean has shape"),
        ({"running_var": np.ones((4, 1))}, "running_var has shape"),
        ({"momentum": 1.5}, "momentum must be in"),
        ({"gamma": np.ones(5)}, "gamma has shape"),
    ],
)
def test_bad_input_names_what_is_wrong(change, message):
    args = {
        "x": np.ones((3, 4)),
        "gamma": None,
        "beta": None,
        "running_mean": np.zeros(4),
        "running_var": np.ones(4),
    }
    with pytest.raises(ValueError, match=message):
        normlab.batch_norm_forward(**{**args, **change})
