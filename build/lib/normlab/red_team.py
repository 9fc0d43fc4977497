"""Planted red-team LayerNorms: each one carries exactly one classic mistake.

Chapters show them, tests prove the witness catches them, exercises grade a
student's witness against them. All keep the output shape of a correct
LayerNorm, which is why a shape check alone never catches them. The correct
formula is Ba, Kiros and Hinton (2016, arXiv:1607.06450), eqs. (3)-(4): mean and
population variance over the last (feature) axis of one record, eps inside the
square root.

Every function takes (x, gamma=None, beta=None, eps=1e-5) like `layer_norm`, and
computes in x's own float dtype (float32 stays float32, so the numerics of the
one-pass variance show), anything else in float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _as_float(x) -> np.ndarray:
    x = np.asarray(x)
    return x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)


def _finish(xhat: np.ndarray, gamma, beta) -> np.ndarray:
    if gamma is not None:
        xhat = xhat * np.asarray(gamma, dtype=xhat.dtype)
    if beta is not None:
        xhat = xhat + np.asarray(beta, dtype=xhat.dtype)
    return xhat


def _standardize(x, axes, gamma, beta, eps, *, ddof=0) -> np.ndarray:
    x = _as_float(x)
    mu = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True, ddof=ddof)
    return _finish((x - mu) / np.sqrt(var + eps), gamma, beta)


def wrong_axis(x, gamma=None, beta=None, eps=1e-5):
    """Statistics down the token axis (-2), per feature: 'axis=0' on a (T, d) matrix."""
    return _standardize(x, -2, gamma, beta, eps)


def batch_axes(x, gamma=None, beta=None, eps=1e-5):
    """Statistics per feature over every leading axis: batch-norm in LayerNorm's clothes."""
    x = _as_float(x)
    return _standardize(x, tuple(range(x.ndim - 1)), gamma, beta, eps)


def joint_token_feature(x, gamma=None, beta=None, eps=1e-5):
    """Statistics over the last two axes (T, d) together: one mean per sequence."""
    return _standardize(x, (-2, -1), gamma, beta, eps)


def sample_variance(x, gamma=None, beta=None, eps=1e-5):
    """Divides by d - 1 (np.var(ddof=1), torch.var's default) instead of d."""
    return _standardize(x, -1, gamma, beta, eps, ddof=1)


def eps_outside_sqrt(x, gamma=None, beta=None, eps=1e-5):
    """Adds eps to the standard deviation, (x - mu) / (sigma + eps)."""
    x = _as_float(x)
    mu = x.mean(axis=-1, keepdims=True)
    sigma = x.std(axis=-1, keepdims=True)
    return _finish((x - mu) / (sigma + eps), gamma, beta)


def one_pass_variance(x, gamma=None, beta=None, eps=1e-5):
    """Variance as E[x^2] - E[x]^2: cancels catastrophically far from zero."""
    x = _as_float(x)
    mu = x.mean(axis=-1, keepdims=True)
    var = (x * x).mean(axis=-1, keepdims=True) - mu * mu
    with np.errstate(invalid="ignore"):
        return _finish((x - mu) / np.sqrt(var + eps), gamma, beta)


def rms_in_place_of_ln(x, gamma=None, beta=None, eps=1e-5):
    """Skips the centring: RMSNorm where LayerNorm was asked for."""
    x = _as_float(x)
    return _finish(x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps), gamma, beta)


@dataclass(frozen=True)
class Planted:
    """One red-team implementation and the misconception it carries."""

    name: str
    fn: object
    misconception: str


RED_TEAM: dict[str, Planted] = {
    p.name: p
    for p in (
        Planted("wrong_axis", wrong_axis, "normalizes down the token axis, not across features"),
        Planted("batch_axes", batch_axes, "normalizes each feature across the batch (batch-norm)"),
        Planted(
            "joint_token_feature",
            joint_token_feature,
            "shares one mean and variance across all tokens of a sequence",
        ),
        Planted("sample_variance", sample_variance, "divides by d - 1 instead of d"),
        Planted(
            "eps_outside_sqrt",
            eps_outside_sqrt,
            "adds eps to the standard deviation instead of the variance",
        ),
        Planted(
            "one_pass_variance",
            one_pass_variance,
            "computes the variance as E[x^2] - E[x]^2, which cancels far from zero",
        ),
        Planted("rms_in_place_of_ln", rms_in_place_of_ln, "skips subtracting the mean"),
    )
}
