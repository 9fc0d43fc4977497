"""normlab.group_norm (Wu and He, 2018, arXiv:1803.08494) against torch in float64, its two
extremes (LayerNorm over (C, ...) and InstanceNorm), its properties and its bad input."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import normlab

# (N, C, ...) of rank 2 to 5, with C = 6 or 12 so that several group counts divide it
SHAPES = [(4, 6), (2, 6, 5), (3, 12, 4, 4), (2, 6, 3, 2, 4), (1, 6, 7), (5, 12, 1)]


def _data(shape, seed=0):
    """Samples on very different scales and offsets, per sample and channel."""
    rng = np.random.default_rng(seed)
    lead = shape[:2] + (1,) * (len(shape) - 2)
    scale = 10.0 ** rng.uniform(-2, 3, size=lead)
    return rng.normal(size=shape) * scale + rng.normal(size=lead) * 50


def _divisors(c):
    return [g for g in range(1, c + 1) if c % g == 0]


def _channel_params(c, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=c), rng.normal(size=c)


def _t(a):
    return None if a is None else torch.from_numpy(a)


def _torch(x, groups, gamma=None, beta=None, eps=1e-5):
    return F.group_norm(_t(x), groups, _t(gamma), _t(beta), eps=eps).numpy()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("eps", [1e-5, 0.25])
def test_matches_torch_for_every_group_count(shape, affine, eps):
    x = _data(shape)
    gamma, beta = _channel_params(shape[1]) if affine else (None, None)
    for groups in _divisors(shape[1]):  # 1, C and everything between
        ours = normlab.group_norm(x, groups, gamma, beta, eps=eps)
        np.testing.assert_allclose(
            ours, _torch(x, groups, gamma, beta, eps), rtol=0, atol=1e-10, err_msg=f"G={groups}"
        )


@pytest.mark.parametrize("shape", SHAPES)
def test_one_group_is_layer_norm_over_every_axis_but_the_batch(shape):
    """torch's normalized_shape = (C, ...): LayerNorm over several trailing axes."""
    x = _data(shape)
    gamma, beta = _channel_params(shape[1])
    trailing = shape[1:]
    expand = (shape[1],) + (1,) * (len(shape) - 2)  # GroupNorm's per-channel gain, spread out
    weight = torch.from_numpy(np.broadcast_to(gamma.reshape(expand), trailing).copy())
    bias = torch.from_numpy(np.broadcast_to(beta.reshape(expand), trailing).copy())
    theirs = F.layer_norm(torch.from_numpy(x), trailing, weight, bias, eps=1e-5).numpy()
    np.testing.assert_allclose(normlab.group_norm(x, 1, gamma, beta), theirs, rtol=0, atol=1e-10)
    # ... and normlab's own layer_norm on each sample flattened into one record
    flat = normlab.layer_norm(x.reshape(shape[0], -1)).reshape(shape)
    np.testing.assert_allclose(normlab.group_norm(x, 1), flat, rtol=0, atol=1e-12)


# torch's instance_norm refuses a single position ("more than 1 spatial element")
@pytest.mark.parametrize("shape", [s for s in SHAPES if np.prod(s[2:]) > 1])
@pytest.mark.parametrize("affine", [False, True])
def test_one_group_per_channel_is_instance_norm(shape, affine):
    x = _data(shape)
    gamma, beta = _channel_params(shape[1]) if affine else (None, None)
    theirs = F.instance_norm(_t(x), weight=_t(gamma), bias=_t(beta), eps=1e-5)
    ours = normlab.group_norm(x, shape[1], gamma, beta)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=0, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 3),  # N
    st.sampled_from([(1, 1), (1, 4), (2, 2), (4, 1), (3, 2), (2, 3)]),  # (G, C / G)
    st.lists(st.integers(1, 4), min_size=0, max_size=2),  # positions
    st.integers(0, 2**31 - 1),
)
def test_matches_torch_on_random_shapes(n, grouping, positions, seed):
    groups, per_group = grouping
    shape = (n, groups * per_group, *positions)
    assume(n * per_group * np.prod(positions) > 1)  # torch refuses that case, see below
    x = _data(shape, seed)
    np.testing.assert_allclose(normlab.group_norm(x, groups), _torch(x, groups), rtol=0, atol=1e-10)


def test_each_group_of_each_sample_is_standardized():
    x = _data((3, 12, 5, 2))
    eps = 1e-5
    y = normlab.group_norm(x, 4, eps=eps).reshape(3, 4, -1)  # (N, G, C/G * positions)
    var_in = x.reshape(3, 4, -1).var(axis=-1)
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), var_in / (var_in + eps), rtol=1e-10)


def test_a_sample_alone_normalizes_as_inside_the_batch_bit_for_bit():
    x = _data((4, 6, 3, 3))
    together = normlab.group_norm(x, 3)
    for i in range(4):
        np.testing.assert_array_equal(normlab.group_norm(x[i : i + 1], 3)[0], together[i])


def test_changing_one_group_moves_no_other_group():
    x = _data((2, 6, 4))
    before = normlab.group_norm(x, 3)
    changed = x.copy()
    changed[1, 2:4] = changed[1, 2:4] * -3.0 + 17.0  # group 1 of sample 1
    after = normlab.group_norm(changed, 3)
    moved = np.abs(after - before).reshape(2, 3, -1).max(axis=-1)  # (N, G)
    assert moved[1, 1] > 0
    moved[1, 1] = 0
    np.testing.assert_array_equal(moved, 0.0)


def test_shift_and_scale_of_a_group_change_nothing_at_eps_zero():
    x = _data((2, 6, 5))
    y = normlab.group_norm(x, 2, eps=0)
    moved = x.copy()
    moved[0, :3] = 7.5 * moved[0, :3] - 40.0  # group 0 of sample 0: scaled and shifted
    np.testing.assert_allclose(normlab.group_norm(moved, 2, eps=0), y, atol=1e-10)


def test_a_group_of_one_value_gives_beta_where_torch_refuses():
    """Like layer_norm with d = 1. torch raises when the whole input holds one value per group."""
    beta = np.array([0.5, -2.0])
    y = normlab.group_norm(np.array([[3.0, 1e9]]), 2, beta=beta)  # (N, C) = (1, 2), G = C
    np.testing.assert_array_equal(y, [beta])
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        _torch(np.array([[3.0, 1e9]]), 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float32_and_float64_are_kept(dtype):
    assert normlab.group_norm(_data((2, 4, 3)).astype(dtype), 2).dtype == dtype


def test_float16_is_computed_in_float32_and_returned_as_float16():
    x16 = (_data((2, 4, 3)) * 0.01).astype(np.float16)
    y = normlab.group_norm(x16, 2)
    assert y.dtype == np.float16
    np.testing.assert_array_equal(
        y, normlab.group_norm(x16.astype(np.float32), 2).astype(np.float16)
    )


def test_integers_compute_in_float64_and_the_input_is_untouched():
    x = np.arange(24).reshape(2, 4, 3)
    before = x.copy()
    y = normlab.group_norm(x, 2)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(y, normlab.group_norm(x.astype(np.float64), 2), rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(0, 4, 3), (2, 4, 0), (0, 4)])
def test_an_empty_input_gives_an_empty_result_as_in_torch(shape):
    y = normlab.group_norm(np.zeros(shape), 2)
    assert y.shape == _torch(np.zeros(shape), 2).shape == shape


def test_a_rank_one_input_is_refused():
    with pytest.raises(ValueError, match=r"needs \(N, C, \.\.\.\) input"):
        normlab.group_norm(np.ones(6), 2)


def test_an_empty_channel_axis_is_refused():
    with pytest.raises(ValueError, match="C = 0"):
        normlab.group_norm(np.ones((2, 0, 3)), 1)


def test_groups_that_do_not_divide_the_channels_are_refused():
    with pytest.raises(ValueError, match="C = 6 channels, which num_groups = 4 does not divide"):
        normlab.group_norm(np.ones((2, 6, 3)), 4)


@pytest.mark.parametrize("groups", [0, -2])
def test_a_group_count_below_one_is_refused(groups):
    with pytest.raises(ValueError, match="num_groups must be >= 1"):
        normlab.group_norm(np.ones((2, 6, 3)), groups)


@pytest.mark.parametrize("groups", [2.0, True, "2", None])
def test_a_group_count_that_is_not_an_integer_is_refused(groups):
    with pytest.raises(TypeError, match="num_groups must be an integer"):
        normlab.group_norm(np.ones((2, 6, 3)), groups)


@pytest.mark.parametrize("name", ["gamma", "beta"])
def test_per_channel_parameters_of_the_wrong_shape_name_the_channels(name):
    with pytest.raises(ValueError, match=rf"{name} has shape \(3,\), but x has C = 6 channels"):
        normlab.group_norm(np.ones((2, 6, 3)), 2, **{name: np.ones(3)})


@pytest.mark.parametrize("eps", [-1e-5, float("nan")])
def test_a_bad_eps_is_refused(eps):
    with pytest.raises(ValueError, match="eps"):
        normlab.group_norm(_data((2, 4, 3)), 2, eps=eps)


def test_eps_zero_on_a_constant_group_is_refused_not_nan():
    x = _data((2, 4, 3))
    x[1, 2:] = 5.0  # group 1 of sample 1 is constant
    with pytest.raises(ValueError, match="group 1 of sample 1 has zero variance and eps = 0"):
        normlab.group_norm(x, 2, eps=0)


def test_non_real_input_is_refused():
    with pytest.raises(TypeError, match="real numbers"):
        normlab.group_norm(np.array([["a", "b"], ["c", "d"]]), 1)
