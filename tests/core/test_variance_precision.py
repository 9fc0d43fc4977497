"""normlab.variance_precision: chapter 11's measurements, checked against float64 and by hand."""

from __future__ import annotations

import numpy as np
import pytest

import normlab
from normlab import red_team, variance_precision


def test_both_formulas_agree_with_numpy_in_float64_near_zero():
    x = variance_precision.records_at_offset(0.0, rows=50, d=16, dtype=np.float64, seed=1)
    np.testing.assert_allclose(variance_precision.two_pass_variance(x), x.var(axis=-1), rtol=1e-12)
    np.testing.assert_allclose(variance_precision.one_pass_variance(x), x.var(axis=-1), rtol=1e-10)


def test_the_hand_record_has_variance_one_point_two_five():
    r = np.array([1.0, 2.0, 3.0, 4.0])
    assert variance_precision.one_pass_variance(r) == 1.25
    assert variance_precision.two_pass_variance(r) == 1.25


def test_float32_stays_float32():
    x = variance_precision.records_at_offset(1e4, rows=4, d=8)
    assert x.dtype == np.float32
    assert variance_precision.one_pass_variance(x).dtype == np.float32
    assert variance_precision.two_pass_variance(x).dtype == np.float32


def test_integers_are_refused_with_a_clear_error():
    with pytest.raises(TypeError, match="floating-point"):
        variance_precision.one_pass_variance(np.arange(8))


def test_one_pass_in_float32_at_offset_1e4_gives_nan_on_about_a_third():
    x = variance_precision.records_at_offset(1e4, rows=4000, d=64)
    rate = variance_precision.nan_rate(red_team.one_pass_variance, x)
    assert 0.2 < rate < 0.45, rate
    assert variance_precision.nan_rate(normlab.layer_norm, x) == 0.0


def test_nan_rate_counts_records_not_elements():
    def half_bad(x):
        y = np.zeros_like(x)
        y[::2, 0] = np.nan
        return y

    assert variance_precision.nan_rate(half_bad, np.ones((10, 5))) == 0.5


def test_variance_error_judges_against_the_exact_variance_of_the_same_values():
    x = variance_precision.records_at_offset(1e4, rows=500, d=64)
    assert variance_precision.variance_error(variance_precision.two_pass_variance, x) < 1e-6
    assert variance_precision.variance_error(variance_precision.one_pass_variance, x) > 0.1
    assert variance_precision.variance_error(lambda a: normlab.row_stats(a)[1], x) < 1e-6


def test_welford_agrees_with_numpy_in_float64_for_any_leading_axes():
    x = np.random.default_rng(3).normal(5.0, 2.0, size=(3, 4, 17))
    np.testing.assert_allclose(variance_precision.welford_variance(x), x.var(axis=-1), rtol=1e-12)
    assert variance_precision.welford_variance(np.array([1.0, 2.0, 3.0, 4.0])) == 1.25
    assert variance_precision.welford_variance(np.full((2, 5), 7.0)).tolist() == [0.0, 0.0]


def test_welford_in_float32_far_from_zero_avoids_the_cancellation():
    x = variance_precision.records_at_offset(1e4, rows=2000, d=64)
    assert variance_precision.welford_variance(x).dtype == np.float32
    welford = variance_precision.variance_error(variance_precision.welford_variance, x)
    two_pass = variance_precision.variance_error(variance_precision.two_pass_variance, x)
    one_pass = variance_precision.variance_error(variance_precision.one_pass_variance, x)
    # its running mean is rounded at the offset's scale, so it is not as exact as two passes,
    # but the error stays a rounding error (about 1e-4 here) instead of exceeding the answer
    assert two_pass < welford < 1e-3, (welford, two_pass)
    assert one_pass > 1000 * welford
