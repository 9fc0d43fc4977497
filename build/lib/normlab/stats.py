"""Per-record statistics: the mean and the population variance over the last axis.

Ba, Kiros and Hinton (2016, arXiv:1607.06450), eq. (3), compute for each record
r of d features

    mu      = (1/d) sum_k r_k
    sigma^2 = (1/d) sum_k (r_k - mu)^2

Population variance: divide by d, not d - 1. The statistic describes this record,
it does not estimate the variance of a larger population.

Numerics. The one-pass formula E[r^2] - E[r]^2 cancels catastrophically when a
record sits far from zero (float32 at an offset of 1e4 gives a negative variance,
hence NaN, on about a third of such records). We use two passes over shifted data:
subtract the record's first feature K (any value inside the record works), take
the mean of r - K, then the mean of the squared deviations. The shift keeps the
summands small, and a constant record gives mu equal to that constant exactly and
a variance of exactly 0.
"""

from __future__ import annotations

import numpy as np

from ._inputs import as_records


def centered_and_var(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-pass statistics on an array already in its compute dtype.

    Returns (mu, xc, var) with mu and var of shape (..., 1) and xc = x - mu of the
    shape of x. Used by every normalization here; it never writes into x.
    """
    shift = x[..., :1]  # (..., 1) one member of each record
    xs = x - shift  # (..., d) shifted copy: small summands
    # mu = K + mean(r - K)
    mean_shifted = xs.mean(axis=-1, keepdims=True)  # (..., 1)
    # r - mu = (r - K) - mean(r - K): centred without touching the large offset again
    xc = np.subtract(xs, mean_shifted, out=xs)  # (..., d)
    # sigma^2 = mean((r - mu)^2), population variance: divide by d, not d - 1
    var = np.mean(xc * xc, axis=-1, keepdims=True)  # (..., 1)
    mu = shift + mean_shifted  # (..., 1)
    return mu, xc, var


def row_stats(x) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population variance of every record (over the last axis).

    Ba, Kiros and Hinton (2016), eq. (3). For x of shape (..., d) both results have
    shape x.shape[:-1]; their dtype follows normlab's dtype rule (float16 is
    computed in float32 and returned as float16).

    >>> mean, var = row_stats([1.0, 2.0, 3.0, 4.0])
    >>> float(mean), float(var)
    (2.5, 1.25)
    """
    arr, out_dtype = as_records(x)
    mu, _, var = centered_and_var(arr)
    return mu[..., 0].astype(out_dtype, copy=False), var[..., 0].astype(out_dtype, copy=False)
