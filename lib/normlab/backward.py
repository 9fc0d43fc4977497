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
