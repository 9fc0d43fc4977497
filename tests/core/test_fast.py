"""layer_norm_fast: bit for bit the reference, on every shape, dtype and block size."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import normlab
from normlab.fast import block_rows_for, layer_norm_fast

FLOATS = [np.float32, np.float64, np.float16]


def records(rng, shape, dtype, offset=0.0, scale=1.0):
    return (offset + scale * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "shape", [(5,), (3, 7), (2, 3, 64), (513, 255), (300, 256), (70, 768), (9, 4096), (4, 1)]
)
@pytest.mark.parametrize("block_rows", [None, 1, 7])
def test_equals_the_reference_bit_for_bit(shape, dtype, block_rows):
    """Same arithmetic, same order: np.array_equal, not allclose."""
    rng = np.random.default_rng(sum(shape))
    x = records(rng, shape, dtype, offset=3.0, scale=2.0)
    gamma, beta = records(rng, shape[-1:], dtype), records(rng, shape[-1:], dtype)
    expected = normlab.layer_norm(x, gamma, beta)
    got = layer_norm_fast(x, gamma, beta, block_rows=block_rows)
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("offset", [1e4, 1e6])
def test_stays_exact_on_records_far_from_zero(offset):
    """The shifted two-pass statistics survive large offsets, as in the reference."""
    rng = np.random.default_rng(1)
    x = records(rng, (200, 768), np.float32, offset=offset)
    got = layer_norm_fast(x)
    assert np.all(np.isfinite(got))
    assert np.array_equal(got, normlab.layer_norm(x))


@settings(max_examples=60, deadline=None)
@given(
    x=hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=40),
        elements=st.floats(-1e4, 1e4, width=32),
    ),
    block_rows=st.integers(1, 50),
)
def test_any_input_matches_the_reference(x, block_rows):
    d = x.shape[-1]
    gamma = np.linspace(0.5, 2.0, d, dtype=np.float32)
    beta = np.linspace(-1.0, 1.0, d, dtype=np.float32)
    expected = normlab.layer_norm(x, gamma, beta)
    assert np.array_equal(
        layer_norm_fast(x, gamma, beta, block_rows=block_rows), expected, equal_nan=True
    )


def test_none_gamma_and_beta_and_constant_records():
    x = np.full((4, 300), 7.5, dtype=np.float32)
    x[1] = np.arange(300)
    assert np.array_equal(layer_norm_fast(x), normlab.layer_norm(x))
    assert np.all(layer_norm_fast(x)[0] == 0.0)  # a constant record gives exactly beta = 0


def test_writes_into_out_and_in_place():
    rng = np.random.default_rng(2)
    x = records(rng, (100, 512), np.float32)
    gamma = records(rng, (512,), np.float32)
    expected = normlab.layer_norm(x, gamma)
    out = np.empty_like(x)
    assert layer_norm_fast(x, gamma, out=out) is out
    assert np.array_equal(out, expected)
    y = x.copy()
    assert layer_norm_fast(y, gamma, out=y, block_rows=9) is y
    assert np.array_equal(y, expected)


def test_the_input_is_not_modified():
    x = records(np.random.default_rng(3), (50, 300), np.float32)
    before = x.copy()
    layer_norm_fast(x)
    assert np.array_equal(x, before)


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (np.empty((10, 8), np.float64), "dtype float32"),
        (np.empty((10, 9), np.float32), "shape"),
        (np.empty((8, 10), np.float32).T, "C-contiguous"),
        ([[0.0] * 8] * 10, "NumPy array"),
    ],
)
def test_rejects_an_unusable_out(out, message):
    x = np.ones((10, 8), np.float32)
    with pytest.raises((ValueError, TypeError), match=message):
        layer_norm_fast(x, out=out)


def test_rejects_an_out_that_overlaps_x_partly():
    buf = np.arange(11 * 8, dtype=np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        layer_norm_fast(buf[:80].reshape(10, 8), out=buf[8:].reshape(10, 8))


def test_fails_like_the_reference_on_zero_variance_without_eps():
    x = np.ones((3, 4, 5), np.float32)
    x[0, 0] = np.arange(5)
    with pytest.raises(ValueError, match=r"record \(0, 1\) has zero variance") as ref:
        normlab.layer_norm(x, eps=0.0)
    with pytest.raises(ValueError, match=r"record \(0, 1\) has zero variance") as fast:
        layer_norm_fast(x, eps=0.0, block_rows=2)
    assert str(fast.value) == str(ref.value)


def test_names_a_constant_record_of_a_later_block_by_its_place_in_x():
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    x[2, 3] = 7.0  # flat record 11: the second of the block that starts at record 10
    with pytest.raises(ValueError, match=r"record \(2, 3\) has zero variance") as ref:
        normlab.layer_norm(x, eps=0.0)
    with pytest.raises(ValueError, match=r"record \(2, 3\) has zero variance") as fast:
        layer_norm_fast(x, eps=0.0, block_rows=5)
    assert str(fast.value) == str(ref.value)


def test_fails_like_the_reference_on_a_single_constant_record():
    x = np.full(5, 2.0, np.float32)  # one record, no leading axes
    with pytest.raises(ValueError, match=r"^the record has zero variance") as ref:
        normlab.layer_norm(x, eps=0.0)
    with pytest.raises(ValueError, match=r"^the record has zero variance") as fast:
        layer_norm_fast(x, eps=0.0)
    assert str(fast.value) == str(ref.value)


def test_leaves_numpys_buffer_size_as_it_was():
    before = np.getbufsize()
    layer_norm_fast(np.ones((4, 1024), np.float32))
    assert np.getbufsize() == before


def test_blocks_hold_about_one_mebibyte():
    assert block_rows_for(768, 4) == 341
    assert block_rows_for(2**21, 4) == 1  # one record that is larger than a block
