"""Hand values from the paper's definition (Ba, Kiros and Hinton, 2016, eq. 3), worked on paper."""

import math

import numpy as np
import pytest
import torch

import normlab

R = [1.0, 2.0, 3.0, 4.0]


def test_row_stats_of_the_worked_example():
    mean, var = normlab.row_stats(R)
    assert float(mean) == 2.5
    # ((-1.5)^2 + (-0.5)^2 + 0.5^2 + 1.5^2) / 4 = 5 / 4, not the sample variance 5 / 3
    assert float(var) == 1.25


def test_layer_norm_of_the_worked_example_without_eps():
    y = normlab.layer_norm(R, eps=0.0)
    expected = [c / math.sqrt(1.25) for c in (-1.5, -0.5, 0.5, 1.5)]
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-15)
    assert np.round(y, 6).tolist() == [-1.341641, -0.447214, 0.447214, 1.341641]
    assert abs(y.mean()) < 1e-15
    assert (y**2).mean() == pytest.approx(1.0, abs=1e-15)


def test_eps_sits_inside_the_square_root():
    y = normlab.layer_norm(R, eps=1e-5)
    expected = np.array([-1.5, -0.5, 0.5, 1.5]) / math.sqrt(1.25 + 1e-5)
    np.testing.assert_allclose(y, expected, rtol=1e-15)


def test_a_first_gain_of_two_doubles_only_the_first_coordinate():
    plain = normlab.layer_norm(R)
    gamma = np.array([2.0, 1.0, 1.0, 1.0])
    scaled = normlab.layer_norm(R, gamma=gamma)
    assert scaled[0] == 2 * plain[0]
    np.testing.assert_array_equal(scaled[1:], plain[1:])


def test_bias_shifts_each_feature_by_its_own_amount():
    beta = np.array([0.5, -1.0, 0.0, 3.0])
    np.testing.assert_allclose(normlab.layer_norm(R, beta=beta), normlab.layer_norm(R) + beta)


@pytest.mark.parametrize(
    ("kind", "kwargs", "expected"),
    [
        ("layer_norm", {}, 1024),
        ("layer_norm", {"bias": False}, 512),
        ("layer_norm", {"affine": False}, 0),
        ("rms_norm", {}, 512),
        ("batch_norm", {}, 1024),
        ("batch_norm", {"bias": False}, 512),
    ],
)
def test_param_count_names_its_convention(kind, kwargs, expected):
    assert normlab.param_count(kind, 512, **kwargs) == expected


def test_param_count_matches_torch_modules():
    def count(module):
        return sum(p.numel() for p in module.parameters())

    assert normlab.param_count("layer_norm", 512) == count(torch.nn.LayerNorm(512))
    assert normlab.param_count("layer_norm", 512, bias=False) == count(
        torch.nn.LayerNorm(512, bias=False)
    )
    assert normlab.param_count("layer_norm", 512, affine=False) == count(
        torch.nn.LayerNorm(512, elementwise_affine=False)
    )
    assert normlab.param_count("rms_norm", 512) == count(torch.nn.RMSNorm(512))
    assert normlab.param_count("batch_norm", 512) == count(torch.nn.BatchNorm1d(512))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("group_norm", 8), "unknown kind"),
        (("layer_norm", 0), "positive integer"),
        (("layer_norm", 2.5), "positive integer"),
        (("layer_norm", True), "positive integer"),
    ],
)
def test_param_count_rejects_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        normlab.param_count(*args)


@pytest.mark.parametrize("module", ["normlab.layer_norm", "normlab.stats"])
def test_docstring_examples_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
