"""The backward pass of layer normalization, derived by hand.

With x_hat = (x - mu) / sigma, sigma = sqrt(var + eps) (Ba, Kiros and Hinton,
2016, arXiv:1607.06450) and y = gamma * x_hat + beta, the chain rule through the
record's own mean and variance gives, per record of d features,

    dbeta  = sum over records of dy
    dgamma = sum over records of dy * x_hat
    g      = dy * gamma
    dx     = (g - mean(g) - x_hat * mean(g * x_hat)) / sigma

The two means are the price of normalizing: every feature's gradient feels the
record's statistics, but never another record's. `normlab.backward_stages` derives
the same result one stage of the computational graph at a time.

Batch-norm (Ioffe and Szegedy, 2015, arXiv:1502.03167) is LayerNorm of the transposed
(records, features) block, so `batch_norm_backward` is the same formula with the two
means taken over the batch instead of the features: there every record's gradient
feels every other record of the batch.
"""

from __future__ import annotations

import numpy as np

from ._inputs import (
    ZERO_VARIANCE,
    as_feature_param,
    as_records,
    check_eps,
    check_same_shape,
    raise_if_undefined,
)
from .batch_norm import feature_stats, raise_if_constant_feature, require_a_crowd
from .stats import centered_and_var


def backward_inputs(dy, x, gamma, eps):
    """Check and convert a backward pass's arguments: (dy, x, gamma, eps, out_dtype).

    dy and x in x's compute dtype (the dtype rule of `layer_norm`), of the same shape;
    gamma None or shape (d,); eps a finite float >= 0.
    """
    arr, out_dtype = as_records(x)
    dy_arr = np.asarray(dy)
    check_same_shape(dy_arr, arr, names=("dy", "x"))
    dy_arr, _ = as_records(dy_arr, name="dy")
    dy_arr = dy_arr.astype(arr.dtype, copy=False)
    gamma = as_feature_param(gamma, arr.shape[-1], arr.dtype, name="gamma")
    return dy_arr, arr, gamma, check_eps(eps), out_dtype


def layer_norm_backward(dy, x, gamma=None, eps: float = 1e-5):
    """Gradients of LayerNorm: returns (dx, dgamma, dbeta).

    `dy` and `x` have the same shape (..., d); `gamma` shape (d,) or None (ones).
    dx has the shape of x; dgamma and dbeta have shape (d,) and are summed over
    every leading axis. With gamma=None they are the gradients with respect to the
    implicit gamma = 1 and beta = 0. Dtype rule as in `layer_norm` (computed in x's
    compute dtype).
    """
    dy_arr, arr, gamma, eps, out_dtype = backward_inputs(dy, x, gamma, eps)

    _, xc, var = centered_and_var(arr)
    raise_if_undefined(var, eps, ZERO_VARIANCE)
    inv_sigma = 1.0 / np.sqrt(var + arr.dtype.type(eps))  # (..., 1)
    x_hat = xc * inv_sigma  # (..., d)
    lead = tuple(range(arr.ndim - 1))
    dbeta = dy_arr.sum(axis=lead)  # (d,)
    dgamma = (dy_arr * x_hat).sum(axis=lead)  # (d,)
    g = dy_arr if gamma is None else dy_arr * gamma  # (..., d)
    # dx = (g - mean(g) - x_hat * mean(g * x_hat)) / sigma
    dx = g - g.mean(axis=-1, keepdims=True)
    dx -= x_hat * (g * x_hat).mean(axis=-1, keepdims=True)
    dx *= inv_sigma
    return tuple(a.astype(out_dtype, copy=False) for a in (dx, dgamma, dbeta))


def batch_norm_backward(dy, x, gamma=None, eps: float = 1e-5):
    """Gradients of training-mode batch-norm: returns (dx, dgamma, dbeta).

    Batch-norm (Ioffe and Szegedy, 2015, arXiv:1502.03167, Algorithm 1) standardizes each
    feature over the records of a batch; LayerNorm (Ba, Kiros and Hinton, 2016,
    arXiv:1607.06450) each record over its features. Transpose the (n, d) block of records
    and one becomes the other, so this is `layer_norm_backward`'s formula, line for line,
    with its two means taken over the batch (axis 0) instead of the features (axis -1).

    `dy` and `x` have the same shape (..., d) with at least two records per feature;
    `gamma` shape (d,) or None (ones). dx has the shape of x; dgamma and dbeta have shape
    (d,) and are summed over every leading axis, as in LayerNorm. Checks, messages and
    dtype rule as in `layer_norm_backward`; with eps = 0 a constant feature is named.
    """
    dy_arr, arr, gamma, eps, out_dtype = backward_inputs(dy, x, gamma, eps)
    require_a_crowd(arr.shape, "batch_norm_backward")
    d = arr.shape[-1]
    flat, flat_dy = arr.reshape(-1, d), dy_arr.reshape(-1, d)  # (n, d): every leading axis

    mean, var = feature_stats(flat)  # (d,), (d,): over the batch, not the features
    raise_if_constant_feature(var, eps)
    inv_sigma = 1.0 / np.sqrt(var + arr.dtype.type(eps))  # (d,)
    x_hat = (flat - mean) * inv_sigma  # (n, d)
    dbeta = flat_dy.sum(axis=0)  # (d,)
    dgamma = (flat_dy * x_hat).sum(axis=0)  # (d,)
    g = flat_dy if gamma is None else flat_dy * gamma  # (n, d)
    # dx = (g - mean(g) - x_hat * mean(g * x_hat)) / sigma, the means over the batch (axis 0)
    dx = g - g.mean(axis=0)  # (n, d)
    dx -= x_hat * (g * x_hat).mean(axis=0)
    dx *= inv_sigma
    dx = dx.reshape(arr.shape)  # (..., d)
    return tuple(a.astype(out_dtype, copy=False) for a in (dx, dgamma, dbeta))
