"""Dynamic Tanh (DyT): a normalization layer's place, without its statistics.

Zhu, Chen, He, LeCun and Liu, "Transformers without Normalization" (CVPR 2025,
arXiv:2503.10622), replace every normalization layer of a transformer (LayerNorm, or RMSNorm in
their LLaMA models) by an elementwise map,

    DyT(x)_k = gamma_k * tanh(alpha * x_k) + beta_k

with `alpha` one learnable scalar (initialised at 0.5 in the paper), `gamma` and `beta` one per
feature (ones and zeros), as LayerNorm's (Ba, Kiros and Hinton, 2016, arXiv:1607.06450). There is
no mean, no variance, no reduction over any axis: each number of each record is mapped alone.
The tanh squashes what LayerNorm would have divided: large inputs saturate at +-gamma.

Shapes and dtypes follow the other references: features on the last axis, (..., d); the dtype
rule of `normlab._inputs` (float32 in, float32 out); nothing passed in is written into.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from ._inputs import as_feature_param, as_records, check_same_shape


def check_alpha(alpha, compute_dtype: np.dtype):
    """DyT's alpha: one finite real number (a scalar, a 0-d array, or one element), as a scalar.

    The paper's code keeps alpha in a tensor of shape (1,), so one element is accepted; a
    per-feature scale is gamma's job, so an array of several numbers is refused.
    """
    if isinstance(alpha, bool):
        raise TypeError("alpha must be a real number; got a bool")
    arr = np.asarray(alpha)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"alpha must be a real number; got {type(alpha).__name__}")
    if arr.size != 1:
        raise ValueError(
            f"alpha has shape {arr.shape}, but DyT's alpha is one number shared by every "
            "feature (a per-feature scale is gamma): pass a scalar"
        )
    value = arr.reshape(())
    if not math.isfinite(float(value)):
        raise ValueError(f"alpha must be finite; got alpha = {float(value)!r}")
    return compute_dtype.type(value)


def dyt(x, alpha, gamma=None, beta=None) -> np.ndarray:
    """DyT(x) = gamma * tanh(alpha * x) + beta, elementwise (Zhu et al., 2025, eq. 1).

    `x` has shape (..., d); `alpha` is one number; `gamma` and `beta` have shape (d,) or are
    None (ones and zeros). Returns an array of x's shape in x's dtype (float16 computed in
    float32); `x`, `gamma` and `beta` are never modified.
    """
    arr, out_dtype = as_records(x)
    d = arr.shape[-1]
    a = check_alpha(alpha, arr.dtype)
    gamma = as_feature_param(gamma, d, arr.dtype, name="gamma")
    beta = as_feature_param(beta, d, arr.dtype, name="beta")
    y = np.tanh(a * arr)  # (..., d): a new array, so the in-place steps below write only into it
    if gamma is not None:
        y *= gamma
    if beta is not None:
        y += beta
    return y.astype(out_dtype, copy=False)


def dyt_backward(dy, x, alpha, gamma=None):
    """Gradients of DyT: returns (dx, dalpha, dgamma, dbeta).

    With t = tanh(alpha x) and y = gamma * t + beta (Zhu et al., 2025, arXiv:2503.10622), the
    chain rule, with d tanh(u) / du = 1 - tanh(u)^2, gives per element

        dx     = dy * gamma * alpha * (1 - t^2)
        dalpha = sum over every element of dy * gamma * x * (1 - t^2)
        dgamma = sum over the leading axes of dy * t
        dbeta  = sum over the leading axes of dy

    `dy` and `x` have the same shape (..., d); `alpha` is one number; `gamma` has shape (d,) or
    is None (ones). dx has x's shape; dalpha is a 0-d array (alpha is one number shared by every
    element, so its gradient sums them all); dgamma and dbeta have shape (d,). Dtype rule as in
    `dyt`; no argument is written into.
    """
    arr, out_dtype = as_records(x)
    dy_arr = np.asarray(dy)
    check_same_shape(dy_arr, arr, names=("dy", "x"))
    dy_arr = as_records(dy_arr, name="dy")[0].astype(arr.dtype, copy=False)
    a = check_alpha(alpha, arr.dtype)
    gamma = as_feature_param(gamma, arr.shape[-1], arr.dtype, name="gamma")
    lead = tuple(range(arr.ndim - 1))

    t = np.tanh(a * arr)  # (..., d)
    # dbeta = sum of dy over every leading axis
    dbeta = dy_arr.sum(axis=lead)  # (d,)
    # dgamma = sum of dy * tanh(alpha x) over every leading axis
    dgamma = (dy_arr * t).sum(axis=lead)  # (d,)
    g = dy_arr if gamma is None else dy_arr * gamma  # (..., d): dL/dt
    # dL/du with u = alpha x: d tanh(u) / du = 1 - tanh(u)^2
    du = g * (1 - t * t)  # (..., d)
    # dx = dL/du * du/dx = dL/du * alpha
    dx = du * a  # (..., d)
    # dalpha = sum over every element of dL/du * du/dalpha = dL/du * x
    dalpha = np.asarray((du * arr).sum(), dtype=out_dtype)  # (): one number, as alpha
    dx, dgamma, dbeta = (p.astype(out_dtype, copy=False) for p in (dx, dgamma, dbeta))
    return dx, dalpha, dgamma, dbeta


def saturated_share(x, alpha, bound: float = 2.0) -> float:
    """The share of elements with |alpha * x| > `bound`: DyT's saturation.

    Verma, "When Does Removing LayerNorm Help?" (2026, arXiv:2604.23434), counts a DyT
    activation as saturated when |alpha x| > 2, where tanh(2) = 0.964: past it an element
    passes less than 1 - tanh(2)^2 = 7 % of its gradient (`dyt_backward`'s dx).
    """
    if not isinstance(bound, Real) or not bound > 0:
        raise ValueError(f"bound must be a positive number; got {bound!r}")
    arr, _ = as_records(x)
    a = check_alpha(alpha, arr.dtype)
    return float(np.mean(np.abs(a * arr) > bound)) if arr.size else float("nan")
