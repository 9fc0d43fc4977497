"""RMSNorm: layer normalization without the centring.

Zhang and Sennrich, Root Mean Square Layer Normalization (2019, arXiv:1910.07467)
keep only the rescaling of Ba, Kiros and Hinton (2016, arXiv:1607.06450):

    RMSNorm(r)_k = gamma_k * r_k / sqrt(mean(r^2) + eps)

There is no mean and no bias, so d parameters instead of 2d. On a record whose
mean is already zero, RMSNorm and LayerNorm agree (mean(r^2) is then the
variance). The course's "you must subtract the mean" misconception is kept,
corrected: the rescaling is the essential part.

`rms_norm` puts eps inside the square root, as the formula above; `rms_norm_eps_outside`
is the other convention, that of Zhang and Sennrich's own PyTorch code, which chapter 7
compares with it. The problem sets ask for `rms_norm`.
"""

from __future__ import annotations

import numpy as np

from ._inputs import as_feature_param, as_records, check_eps, raise_if_undefined


def rms_norm(x, gamma=None, eps: float = 1e-6) -> np.ndarray:
    """RMSNorm over the last axis of `x` (shape (..., d)).

    Zhang and Sennrich (2019), eq. (4). `gamma` has shape (d,) or is None (ones).
    Same dtype rule and errors as `layer_norm`; the input is never modified.
    """
    arr, out_dtype = as_records(x)
    gamma = as_feature_param(gamma, arr.shape[-1], arr.dtype, name="gamma")
    eps = check_eps(eps)
    # mean square of the record: no centring
    mean_square = np.mean(arr * arr, axis=-1, keepdims=True)  # (..., 1)
    denom = np.sqrt(mean_square + arr.dtype.type(eps))  # (..., 1)
    raise_if_undefined(denom, eps, "is all zeros and eps = 0: RMSNorm is undefined there")
    y = arr / denom  # (..., d)
    if gamma is not None:
        y *= gamma
    return y.astype(out_dtype, copy=False)


def rms_norm_eps_outside(x, gamma=None, eps: float = 1e-8) -> np.ndarray:
    """RMSNorm with eps added to the RMS, outside the square root: gamma * r / (RMS(r) + eps).

    The convention, and the default eps = 1e-8, of Zhang and Sennrich's PyTorch code (2019,
    arXiv:1910.07467; https://github.com/bzhangGo/rmsnorm, rmsnorm_torch.py, without its
    optional bias and partial RMS); their TensorFlow code puts eps inside, as `rms_norm`.
    Same input checks, dtype rule and errors as `rms_norm`.
    """
    arr, out_dtype = as_records(x)
    gamma = as_feature_param(gamma, arr.shape[-1], arr.dtype, name="gamma")
    eps = check_eps(eps)
    # RMS(r) + eps: eps added after the square root is taken
    rms = np.sqrt(np.mean(arr * arr, axis=-1, keepdims=True))  # (..., 1)
    denom = rms + arr.dtype.type(eps)  # (..., 1)
    raise_if_undefined(denom, eps, "is all zeros and eps = 0: RMSNorm is undefined there")
    y = arr / denom  # (..., d)
    if gamma is not None:
        y *= gamma
    return y.astype(out_dtype, copy=False)
