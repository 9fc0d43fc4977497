"""The bench's check: the float64 reference accepts honest rounding and refuses real mistakes."""

from __future__ import annotations

import numpy as np
import pytest

import normlab
from normlab import red_team
from normlab.bench.verify import CheckFailed, check_copy, check_layer_norm, rows_to_check


def inputs(d=64, rows=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, d)).astype(np.float32)
    gamma = (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(d)).astype(np.float32)
    return x, gamma, beta


def as64(*arrays):
    return [a.astype(np.float64) for a in arrays]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_accepts_the_reference_in_low_precision(dtype):
    x, gamma, beta = (a.astype(dtype) for a in inputs())
    y = normlab.layer_norm(x, gamma, beta)
    error = check_layer_norm(*as64(y, x, gamma, beta), 1e-5, dtype, "reference")
    assert 0 < error < (1e-5 if dtype == "float32" else 1e-2)


@pytest.mark.parametrize(
    "wrong",
    [red_team.sample_variance, red_team.wrong_axis, red_team.rms_in_place_of_ln],
    ids=lambda f: f.__name__,
)
def test_refuses_a_planted_mistake(wrong):
    x, gamma, beta = inputs(d=64)
    y = wrong(x, gamma, beta)
    with pytest.raises(CheckFailed, match="disagrees with the float64 reference"):
        check_layer_norm(*as64(y, x, gamma, beta), 1e-5, "float32", wrong.__name__)


def test_refuses_nan_and_a_wrong_shape():
    x, gamma, beta = inputs()
    y = normlab.layer_norm(x, gamma, beta)
    y[3, 5] = np.nan
    with pytest.raises(CheckFailed):
        check_layer_norm(*as64(y, x, gamma, beta), 1e-5, "float32", "nan")
    with pytest.raises(CheckFailed, match="shape"):
        check_layer_norm(*as64(y[:, :-1], x, gamma, beta), 1e-5, "float32", "shape")


def test_a_copy_must_be_exact():
    x = inputs()[0]
    assert check_copy(x.copy(), x, "copy") == 0.0
    with pytest.raises(CheckFailed):
        check_copy(x + np.float32(1e-3), x, "copy")


def test_checked_rows_include_both_ends_and_a_spread():
    assert rows_to_check(10).tolist() == list(range(10))
    idx = rows_to_check(100_000)
    assert idx[0] == 0 and idx[-1] == 99_999
    assert len(np.unique(idx)) == len(idx) == 1024
    assert np.all(np.diff(idx) > 0)
    assert np.any((idx > 1000) & (idx < 99_000))
