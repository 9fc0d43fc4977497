"""Measuring the numerics of the variance: one pass against two, float32 and float16.

LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) needs each record's population
variance. Two algebraically equal formulas behave very differently in floating point:

    one pass:  sigma^2 = mean(r^2) - mean(r)^2     two large numbers, subtracted
    two pass:  sigma^2 = mean((r - mu)^2)          small numbers, summed
    Welford:   one pass that updates the mean and the sum of squared deviations together
               (Welford, 1962, Technometrics 4(3)); what fused kernels use

For a record sitting at an offset c far from zero with spread s, mean(r^2) is about c^2 and the
subtraction loses about log10(c^2 / s^2) digits; float32 has about 7, so at c = 1e4, s = 1 none
are left and the result can even come out negative, giving NaN under the square root. These
helpers compute in the dtype they are given (float32 stays float32) and measure what happens;
chapter 11 of the course plots them.
"""

from __future__ import annotations

import numpy as np


def _floating(x) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise TypeError(f"x must hold floating-point numbers; got dtype {x.dtype}")
    return x


def one_pass_variance(x) -> np.ndarray:
    """mean(r^2) - mean(r)^2 over the last axis, in x's own dtype. Shape x.shape[:-1]."""
    x = _floating(x)
    mean = x.mean(axis=-1)  # (...,)
    return (x * x).mean(axis=-1) - mean * mean


def two_pass_variance(x) -> np.ndarray:
    """mean((r - mu)^2) over the last axis, in x's own dtype. Shape x.shape[:-1]."""
    x = _floating(x)
    centred = x - x.mean(axis=-1, keepdims=True)  # (..., d)
    return (centred * centred).mean(axis=-1)


def welford_variance(x) -> np.ndarray:
    """Welford's one-pass variance over the last axis, in x's own dtype. Shape x.shape[:-1].

    One feature at a time, every record at once: the running mean moves by delta / n and the
    sum of squared deviations m2 grows by delta * (r_k - new mean), both small numbers.
    """
    x = _floating(x)
    mean = np.zeros(x.shape[:-1], dtype=x.dtype)  # (...,) the mean of the first n features
    m2 = np.zeros_like(mean)  # (...,) their sum of squared deviations from it
    for k in range(x.shape[-1]):
        n = k + 1
        delta = x[..., k] - mean  # distance from the old mean
        mean = mean + delta / x.dtype.type(n)
        m2 = m2 + delta * (x[..., k] - mean)  # old distance times new distance
    return m2 / x.dtype.type(x.shape[-1])


def records_at_offset(offset: float, *, rows: int, d: int, dtype=np.float32, seed: int = 0):
    """`rows` records of d features: offset + standard normal noise, rounded to `dtype`."""
    rng = np.random.default_rng(seed)
    return (offset + rng.standard_normal((rows, d))).astype(dtype)  # (rows, d)


def nan_rate(norm_fn, x) -> float:
    """Fraction of records (rows of the last axis) whose output holds a NaN or an infinity."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        y = np.asarray(norm_fn(x))
    return float(np.mean(~np.all(np.isfinite(y), axis=-1)))


def variance_error(variance_fn, x) -> float:
    """Median relative error of `variance_fn(x)` against the exact variance of the same values.

    The exact value is computed in float64 from x's own (already rounded) numbers, so only
    the arithmetic of `variance_fn` is judged, not the rounding of the input.
    """
    exact = two_pass_variance(np.asarray(x, dtype=np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        got = np.asarray(variance_fn(x), dtype=np.float64)
    return float(np.median(np.abs(got - exact) / exact))
