"""Behaviour at the edges: dtypes, numerics far from zero, degenerate records, bad input."""

import re

import numpy as np
import pytest

import normlab
from normlab import red_team
from normlab.rms_norm import rms_norm_eps_outside

NORMS = {
    "layer_norm": normlab.layer_norm,
    "rms_norm": normlab.rms_norm,
    "batch_norm": normlab.batch_norm,
}


@pytest.mark.parametrize("name", NORMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float32_and_float64_are_kept(name, dtype):
    x = np.random.default_rng(0).normal(size=(4, 6)).astype(dtype)
    assert NORMS[name](x).dtype == dtype


@pytest.mark.parametrize("name", NORMS)
def test_float16_is_returned_as_float16_but_computed_in_float32(name):
    x16 = (np.random.default_rng(0).normal(size=(4, 6)) * 30 + 200).astype(np.float16)
    y = NORMS[name](x16)
    assert y.dtype == np.float16
    expected = NORMS[name](x16.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(y, expected)


def test_row_stats_follow_the_dtype_rule():
    x16 = np.arange(8, dtype=np.float16).reshape(2, 4)
    mean, var = normlab.row_stats(x16)
    assert mean.dtype == var.dtype == np.float16
    np.testing.assert_array_equal(var, [1.25, 1.25])


@pytest.mark.parametrize("name", NORMS)
@pytest.mark.parametrize("data", [[[1, 2, 3, 4], [4, 4, 0, 0]], [[True, False, True, True]] * 2])
def test_integers_booleans_and_lists_compute_in_float64(name, data):
    y = NORMS[name](data)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, NORMS[name](np.asarray(data, dtype=np.float64)), rtol=0, atol=0)


def test_float32_far_from_zero_agrees_with_float64():
    rng = np.random.default_rng(0)
    x32 = (1e4 + rng.standard_normal((2000, 768))).astype(np.float32)
    reference = normlab.layer_norm(x32.astype(np.float64))
    error = np.abs(normlab.layer_norm(x32) - reference).max()
    assert error <= 2e-3  # torch CPU reaches 1.9e-3 here


def test_one_pass_variance_fails_where_the_reference_does_not():
    rng = np.random.default_rng(0)
    x32 = (1e4 + rng.standard_normal((2000, 768))).astype(np.float32)
    nan_rows = np.isnan(red_team.one_pass_variance(x32)).any(axis=-1).mean()
    assert 0.2 < nan_rows < 0.45  # about a third of the records
    assert not np.isnan(normlab.layer_norm(x32)).any()


@pytest.mark.parametrize("value", [0.0, 0.1, -3.7, 1e4, 1e30])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_constant_record_gives_exactly_beta(value, dtype):
    d = 7
    beta = np.linspace(-1, 1, d).astype(dtype)
    gamma = np.full(d, 3.0, dtype=dtype)
    x = np.full((3, d), value, dtype=dtype)
    # filterwarnings = error: a RuntimeWarning from 0/0 would fail this test
    np.testing.assert_array_equal(
        normlab.layer_norm(x, gamma, beta), np.broadcast_to(beta, x.shape)
    )


def test_d_equal_to_one_gives_beta():
    x = np.array([[5.0], [-2.0], [1e9]])
    np.testing.assert_array_equal(normlab.layer_norm(x, beta=np.array([0.25])), [[0.25]] * 3)


@pytest.mark.parametrize("shape", [(0, 5), (3, 0, 5), (0, 0, 2)])
def test_an_empty_batch_gives_an_empty_result(shape):
    y = normlab.layer_norm(np.zeros(shape))
    mean, var = normlab.row_stats(np.zeros(shape))
    assert y.shape == shape and mean.shape == var.shape == shape[:-1]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_nan_or_inf_spoils_only_its_own_record(bad):
    x = np.random.default_rng(1).normal(size=(2, 3, 6))
    clean = normlab.layer_norm(x)
    x[1, 2, 4] = bad
    with np.errstate(invalid="ignore"):
        y = normlab.layer_norm(x)
    assert np.isnan(y[1, 2]).all()
    keep = np.ones((2, 3), dtype=bool)
    keep[1, 2] = False
    np.testing.assert_array_equal(y[keep], clean[keep])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64])
def test_the_input_is_never_modified(dtype):
    x = (np.random.default_rng(2).normal(size=(3, 4, 5)) * 10).astype(dtype)
    before = x.copy()
    gamma, beta = np.full(5, 2.0), np.full(5, 0.5)
    normlab.layer_norm(x, gamma, beta)
    normlab.row_stats(x)
    normlab.rms_norm(x, gamma)
    normlab.batch_norm(x, gamma, beta)
    normlab.layer_norm_backward(np.ones(x.shape), x, gamma)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(gamma, 2.0)
    np.testing.assert_array_equal(beta, 0.5)


@pytest.mark.parametrize("name", ["gamma", "beta"])
@pytest.mark.parametrize("shape", [(3,), (1, 4), (4, 1), ()])
def test_wrong_parameter_shapes_are_named(name, shape):
    x = np.zeros((2, 4))
    with pytest.raises(ValueError, match=rf"{name} has shape \({'.*' if shape else ''}\).*\(4,\)"):
        normlab.layer_norm(x, **{name: np.ones(shape)})


def test_a_wrong_gamma_message_says_what_d_counts():
    expected = "gamma has shape (3,), but the records have d = 4 features: gamma must have shape"
    with pytest.raises(ValueError, match=re.escape(expected)):
        normlab.rms_norm(np.zeros((2, 4)), np.ones(3))


@pytest.mark.parametrize("fn", [normlab.layer_norm, normlab.rms_norm, normlab.row_stats])
def test_a_zero_dimensional_input_is_refused(fn):
    with pytest.raises(ValueError, match="0-d"):
        fn(3.0)


@pytest.mark.parametrize("fn", [normlab.layer_norm, normlab.rms_norm, normlab.batch_norm])
def test_an_empty_feature_axis_is_refused(fn):
    with pytest.raises(ValueError, match="d = 0"):
        fn(np.zeros((3, 0)))


@pytest.mark.parametrize("eps", [-1e-5, float("nan"), float("inf")])
@pytest.mark.parametrize("fn", [normlab.layer_norm, normlab.rms_norm, normlab.batch_norm])
def test_a_bad_eps_is_refused(fn, eps):
    with pytest.raises(ValueError, match="eps"):
        fn(np.ones((3, 2)), eps=eps)


def test_eps_zero_on_a_constant_record_is_refused_not_nan():
    with pytest.raises(ValueError, match=r"record \(1,\) has zero variance and eps = 0"):
        normlab.layer_norm([[1.0, 2.0], [3.0, 3.0]], eps=0)


@pytest.mark.parametrize(
    ("fn", "what"),
    [(normlab.layer_norm, "has zero variance"), (normlab.rms_norm, "is all zeros")],
)
def test_eps_zero_on_a_single_record_says_the_record_not_an_empty_index(fn, what):
    with pytest.raises(ValueError, match=rf"^the record {what} and eps = 0") as err:
        fn([0.0, 0.0, 0.0], eps=0)
    assert "()" not in str(err.value)


def test_rms_norm_eps_outside_is_checked_like_rms_norm_and_not_a_contract_function():
    with pytest.raises(ValueError, match=r"^record \(1,\) is all zeros and eps = 0"):
        rms_norm_eps_outside([[1.0, 2.0], [0.0, 0.0]], eps=0)
    with pytest.raises(ValueError, match="gamma has shape"):
        rms_norm_eps_outside(np.ones((2, 4)), np.ones(3))
    x = np.random.default_rng(3).standard_normal((4, 8))
    np.testing.assert_allclose(rms_norm_eps_outside(x, eps=0), normlab.rms_norm(x, eps=0))
    assert rms_norm_eps_outside(x.astype(np.float16)).dtype == np.float16
    assert "rms_norm_eps_outside" not in normlab.__all__  # chapter 7's, not a problem set's


@pytest.mark.parametrize("data", [["a", "b"], [1 + 2j, 3j], [object(), object()]])
def test_non_real_input_is_refused(data):
    with pytest.raises(TypeError, match="real numbers"):
        normlab.layer_norm(np.array(data))


def test_batch_norm_refuses_a_batch_of_one_in_training():
    with pytest.raises(ValueError, match="needs a crowd"):
        normlab.batch_norm(np.ones((1, 1, 4)))
    layer = normlab.BatchNorm(4)
    with pytest.raises(ValueError, match="needs a crowd"):
        layer(np.ones((1, 4)))


def test_batch_norm_module_checks_its_feature_count():
    with pytest.raises(ValueError, match="built for 4 features"):
        normlab.BatchNorm(4)(np.ones((3, 5)))


def test_backward_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match=r"dy has shape \(2, 3\) but x has shape \(2, 4\)"):
        normlab.layer_norm_backward(np.ones((2, 3)), np.ones((2, 4)))


def test_import_normlab_loads_neither_torch_nor_matplotlib():
    """A student's install holds numpy only: the reference must not need anything else."""
    import subprocess
    import sys

    code = (
        "import sys, normlab, normlab.grading; normlab.layer_norm([1.0, 2.0]); "
        "print(sorted({'torch', 'matplotlib'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_batch_norm_and_the_backward_pass_refuse_an_undefined_zero_over_zero():
    """eps = 0 with nothing to divide by is named, never returned as nan (as layer_norm does)."""
    x = np.array([[1.0, 2.0], [1.0, 3.0]])  # feature 0 is constant over the batch
    with pytest.raises(ValueError, match=r"feature 0 has zero variance over the batch"):
        normlab.batch_norm(x, eps=0.0)
    with pytest.raises(ValueError, match=r"feature 0 has zero variance over the batch"):
        normlab.BatchNorm(2, eps=0.0)(x)
    constant = np.array([[1.0, 2.0, 3.0], [4.0, 4.0, 4.0]])  # record (1,) is constant
    with pytest.raises(ValueError, match=r"record \(1,\) has zero variance and eps = 0"):
        normlab.layer_norm_backward(np.ones((2, 3)), constant, eps=0.0)
    assert np.isfinite(normlab.layer_norm_backward(np.ones((2, 3)), constant)[0]).all()
