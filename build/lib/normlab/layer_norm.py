"""Layer normalization, forward, in NumPy: the course's reference.

Ba, Kiros and Hinton, Layer Normalization (2016, arXiv:1607.06450), eqs. (3)-(4):
each record r (the d features of one token) is standardized with its own
statistics, then scaled and shifted by a learned gain gamma and bias beta,

    LayerNorm(r)_k = gamma_k * (r_k - mu) / sqrt(sigma^2 + eps) + beta_k.

No other record is read: tokens and batch items stay independent, a batch of one
normalizes exactly as it would inside a larger batch, and there are no running
statistics, so training and inference compute the same function.
"""

from __future__ import annotations

import numpy as np

from ._inputs import ZERO_VARIANCE, as_feature_param, as_records, check_eps, raise_if_undefined
from .stats import centered_and_var


def layer_norm(x, gamma=None, beta=None, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm over the last axis of `x` (shape (..., d)), any number of leading axes.

    Ba, Kiros and Hinton (2016), eqs. (3)-(4). `gamma` and `beta` have shape (d,);
    None means gamma = 1 and beta = 0. `eps` (>= 0) is added to the variance inside
    the square root. The input is never modified. A constant record returns exactly
    beta. Dtypes: float32 and float64 are kept; float16 is computed in float32 and
    returned as float16; integers and lists compute in float64.

    >>> layer_norm([1.0, 2.0, 3.0, 4.0], eps=0.0).round(6).tolist()
    [-1.341641, -0.447214, 0.447214, 1.341641]
    """
    arr, out_dtype = as_records(x)
    d = arr.shape[-1]
    gamma = as_feature_param(gamma, d, arr.dtype, name="gamma")
    beta = as_feature_param(beta, d, arr.dtype, name="beta")
    eps = check_eps(eps)

    _, xc, var = centered_and_var(arr)  # xc: (..., d), var: (..., 1)
    # 1 / sqrt(sigma^2 + eps): eps sits inside the square root, added to the variance
    denom = np.sqrt(var + arr.dtype.type(eps))  # (..., 1)
    raise_if_undefined(denom, eps, ZERO_VARIANCE)
    y = np.divide(xc, denom, out=xc)  # (..., d) standardized: mean 0, variance ~1
    if gamma is not None:
        y *= gamma  # (d,) broadcast over records
    if beta is not None:
        y += beta
    return y.astype(out_dtype, copy=False)
