"""ps7's misconception variants: each one differs from the reference on a generic case by a clear
margin, and from every other variant, and equals the reference where its misconception is
harmless, so that a judge can tell them apart (and knows which cases cannot)."""

import itertools

import numpy as np
import pytest

import normlab
from normlab.answer_key import wrong_implementations as vf

# a judge's case must be at least this far (max |difference|) from every wrong answer
MARGIN = 0.05
SAME = 1e-12


def _gap(a, b) -> float:
    """max |a - b| over an array or a tuple of arrays (of the same shapes)."""
    pairs = zip(a, b, strict=True) if isinstance(a, tuple) else [(a, b)]
    return max(float(np.max(np.abs(np.asarray(p) - np.asarray(q)))) for p, q in pairs)


def _group_case(shape=(2, 6, 6), groups=3, eps=0.5, seed=0):
    """A generic group-norm case: 1 < G < C, C equal to the last axis, and an eps that is not
    small against the variance (1): eps outside the root and the sample variance both shrink
    the output, and only a large eps keeps the two apart."""
    rng = np.random.default_rng(seed)
    c = shape[1]
    x = rng.normal(size=shape) + rng.normal(size=shape[:2] + (1,) * (len(shape) - 2))
    return x, groups, rng.uniform(0.5, 2.0, c), rng.normal(size=c), eps


def _backward_case(shape=(4, 3, 5), seed=1):
    """A generic batch-norm backward case: rank 3, gamma, a random upstream gradient."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape) * 2.0 + rng.normal(size=shape[-1])
    return rng.normal(size=shape), x, rng.uniform(0.5, 2.0, shape[-1]), 1e-5


def _names(variants):
    return [v.__name__ for v in variants]


@pytest.mark.parametrize("shape", [(2, 6, 6), (2, 6, 2, 6)])
@pytest.mark.parametrize("variant", vf.GROUP_NORM, ids=_names(vf.GROUP_NORM))
def test_each_group_norm_variant_misses_the_reference_by_a_clear_margin(variant, shape):
    case = _group_case(shape)
    assert _gap(variant(*case), normlab.group_norm(*case)) > MARGIN


@pytest.mark.parametrize("variant", vf.BATCH_NORM_BACKWARD, ids=_names(vf.BATCH_NORM_BACKWARD))
def test_each_backward_variant_misses_the_reference_by_a_clear_margin(variant):
    case = _backward_case()
    assert _gap(variant(*case), normlab.batch_norm_backward(*case)) > MARGIN


@pytest.mark.parametrize(
    ("variants", "case"),
    [(vf.GROUP_NORM, _group_case()), (vf.BATCH_NORM_BACKWARD, _backward_case())],
    ids=["group_norm", "batch_norm_backward"],
)
def test_the_variants_are_told_apart_from_each_other(variants, case):
    for one, other in itertools.combinations(variants, 2):
        assert _gap(one(*case), other(*case)) > MARGIN, (one.__name__, other.__name__)


# -- where a misconception is harmless, its variant is the right answer -----------------------


@pytest.mark.parametrize("shape", [(2, 6), (2, 6, 3), (1, 6, 2, 2)])
def test_strided_groups_are_contiguous_ones_with_one_group_or_one_channel_per_group(shape):
    x, _, gamma, beta, eps = _group_case(shape)
    for groups in (1, 6):
        right = normlab.group_norm(x, groups, gamma, beta, eps)
        assert _gap(vf.strided_groups(x, groups, gamma, beta, eps), right) < SAME


def test_instance_and_layer_norm_are_group_norm_at_its_two_ends():
    x, _, gamma, beta, eps = _group_case()
    assert (
        _gap(vf.instance_norm(x, 6, gamma, beta, eps), normlab.group_norm(x, 6, gamma, beta, eps))
        < SAME
    )
    for groups in (1, 2, 3, 6):  # whatever num_groups says, these ignore it
        assert (
            _gap(
                vf.layer_norm_over_channels(x, groups, gamma, beta, eps),
                normlab.group_norm(x, 1, gamma, beta, eps),
            )
            < SAME
        )


def test_gain_and_bias_before_normalizing_is_harmless_only_at_gamma_one_beta_zero():
    x, groups, _, _, eps = _group_case()
    c = x.shape[1]
    right = normlab.group_norm(x, groups, eps=eps)
    assert _gap(vf.affine_before_normalizing(x, groups, np.ones(c), np.zeros(c), eps), right) < SAME
    assert _gap(vf.affine_before_normalizing(x, groups, None, None, eps), right) < SAME


def test_eps_outside_the_root_is_harmless_only_at_eps_zero():
    x, groups, gamma, beta, _ = _group_case()
    right = normlab.group_norm(x, groups, gamma, beta, eps=0.0)
    assert _gap(vf.eps_outside_the_root(x, groups, gamma, beta, 0.0), right) < SAME


def test_the_sample_variance_shrinks_every_output_by_sqrt_of_m_minus_one_over_m():
    x, groups, _, _, _ = _group_case()
    m = x.shape[1] // groups * x.shape[2]  # values per group
    right = normlab.group_norm(x, groups, eps=0.0)
    assert _gap(vf.sample_variance(x, groups, None, None, 0.0), right * np.sqrt((m - 1) / m)) < SAME


def test_channels_from_the_last_axis_are_harmless_without_spatial_axes():
    x, groups, gamma, beta, eps = _group_case(shape=(3, 6))
    right = normlab.group_norm(x, groups, gamma, beta, eps)
    assert _gap(vf.channels_from_the_last_axis(x, groups, gamma, beta, eps), right) < SAME


def test_the_backward_over_the_features_is_layer_norms_and_only_dbeta_agrees():
    dy, x, gamma, eps = _backward_case()
    wrong = vf.backward_over_the_features(dy, x, gamma, eps)
    assert _gap(wrong, normlab.layer_norm_backward(dy, x, gamma, eps)) < 1e-9
    right = normlab.batch_norm_backward(dy, x, gamma, eps)
    assert _gap(wrong[2], right[2]) < SAME
    assert min(_gap(wrong[0], right[0]), _gap(wrong[1], right[1])) > MARGIN


def test_the_mean_term_is_harmless_when_dy_has_mean_zero_over_the_batch():
    dy, x, gamma, eps = _backward_case()
    centred = dy - dy.mean(axis=(0, 1))
    right = normlab.batch_norm_backward(centred, x, gamma, eps)
    assert _gap(vf.missing_mean_term(centred, x, gamma, eps), right) < SAME


def test_the_variance_term_is_harmless_when_dy_has_no_part_along_x_hat():
    dy, x, gamma, eps = _backward_case()
    x_hat = normlab.batch_norm(x, eps=eps)
    along = (dy * x_hat).sum(axis=(0, 1)) / (x_hat * x_hat).sum(axis=(0, 1))
    across = dy - along * x_hat  # per feature, orthogonal to x_hat over the batch
    right = normlab.batch_norm_backward(across, x, gamma, eps)
    assert _gap(vf.variance_as_a_constant(across, x, gamma, eps), right) < SAME


def test_swapping_dgamma_and_dbeta_leaves_dx_alone():
    case = _backward_case()
    dx, dgamma, dbeta = normlab.batch_norm_backward(*case)
    assert _gap(vf.dgamma_and_dbeta_swapped(*case), (dx, dbeta, dgamma)) < SAME


@pytest.mark.parametrize("shape", [(6, 5), (6, 1, 5)])
def test_statistics_over_the_first_axis_are_harmless_when_it_is_the_only_leading_one(shape):
    dy, x, gamma, eps = _backward_case(shape)
    right = normlab.batch_norm_backward(dy, x, gamma, eps)
    assert _gap(vf.statistics_over_the_first_axis(dy, x, gamma, eps), right) < SAME
