"""The wrong group norms and batch-norm backwards ps7 diagnoses, one misconception each.

Each function is the right computation (group norm: Wu and He, 2018, arXiv:1803.08494, eq.
(1)-(3); batch-norm's backward: Ioffe and Szegedy, 2015, arXiv:1502.03167, LayerNorm's, Ba,
Kiros and Hinton, 2016, arXiv:1607.06450, with its means over the batch) with one wrong choice,
in float64, with the student function's signature. A judge asks which one the student's output
matches, as `normlab.grading.formulas` does for LayerNorm's family. Where a misconception is
harmless (strided groups with G = 1 or G = C) its output is the right answer, so a case meant to
tell them apart must avoid those inputs.
"""

from __future__ import annotations

import numpy as np


def _group_norm(
    x, groups, gamma, beta, eps, *, strided=False, ddof=0, eps_outside=False, affine_first=False
):
    """Group norm with each of the choices above; the defaults are Wu and He's."""
    x = np.asarray(x, dtype=np.float64)
    n, c = x.shape[:2]
    per_channel = (c,) + (1,) * (x.ndim - 2)  # gamma_c broadcast over the positions
    gain = 1.0 if gamma is None else np.asarray(gamma, dtype=np.float64).reshape(per_channel)
    bias = 0.0 if beta is None else np.asarray(beta, dtype=np.float64).reshape(per_channel)
    if affine_first:
        x = x * gain + bias
    if strided:  # channel c in group c % G
        blocks = x.reshape(n, c // groups, groups, -1).swapaxes(1, 2)  # (N, G, C/G, P)
    else:  # channel c in group c // (C / G)
        blocks = x.reshape(n, groups, c // groups, -1)  # (N, G, C/G, P)
    centred = blocks - blocks.mean(axis=(2, 3), keepdims=True)  # (N, G, C/G, P)
    m = blocks.shape[2] * blocks.shape[3]  # values per group
    var = (centred * centred).sum(axis=(2, 3), keepdims=True) / (m - ddof)  # (N, G, 1, 1)
    y = centred / (np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps))
    y = (y.swapaxes(1, 2) if strided else y).reshape(x.shape)  # (N, C, *spatial)
    return y if affine_first else y * gain + bias


def strided_groups(x, num_groups, gamma=None, beta=None, eps=1e-5):
    """Strided groups: channel c in group c % G instead of the contiguous block c // (C / G)."""
    return _group_norm(x, num_groups, gamma, beta, eps, strided=True)


def instance_norm(x, num_groups, gamma=None, beta=None, eps=1e-5):
    """Statistics over the spatial positions of each channel only: instance norm (G = C)."""
    return _group_norm(x, np.shape(x)[1], gamma, beta, eps)


def layer_norm_over_channels(x, num_groups, gamma=None, beta=None, eps=1e-5):
    """Statistics over every channel of a sample at once: layer norm (G = 1)."""
    return _group_norm(x, 1, gamma, beta, eps)


def sample_variance(x, num_groups, gamma=None, beta=None, eps=1e-5):
    """The sample variance (divide by m - 1) instead of the population variance (by m)."""
    return _group_norm(x, num_groups, gamma, beta, eps, ddof=1)


def affine_before_normalizing(x, num_groups, gamma=None, beta=None, eps=1e-5):
    """Gain and bias applied to x before normalizing, where normalizing then undoes them."""
    return _group_norm(x, num_groups, gamma, beta, eps, affine_first=True)


def eps_outside_the_root(x, num_groups, gamma=None, beta=None, eps=1e-5):
    """eps added to the standard deviation, sqrt(var) + eps, not inside: sqrt(var + eps)."""
    return _group_norm(x, num_groups, gamma, beta, eps, eps_outside=True)


def channels_from_the_last_axis(x, num_groups, gamma=None, beta=None, eps=1e-5):
    """Channels taken from the last axis, (N, *spatial, C), not axis 1: defined when the two
    have the same length (otherwise the student's gamma does not broadcast)."""
    moved = np.moveaxis(np.asarray(x, dtype=np.float64), -1, 1)  # the last axis as channels
    return np.moveaxis(_group_norm(moved, num_groups, gamma, beta, eps), 1, -1)


GROUP_NORM = (
    strided_groups,
    instance_norm,
    layer_norm_over_channels,
    sample_variance,
    affine_before_normalizing,
    eps_outside_the_root,
    channels_from_the_last_axis,
)


def _backward(dy, x, gamma, eps, *, axes=None, mean_term=True, variance_term=True):
    """(dx, dgamma, dbeta) with statistics over `axes` (default: every leading axis, right)."""
    x, dy = np.asarray(x, dtype=np.float64), np.asarray(dy, dtype=np.float64)
    lead = tuple(range(x.ndim - 1))
    axes = lead if axes is None else axes
    centred = x - x.mean(axis=axes, keepdims=True)
    inv_sigma = 1.0 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + eps)
    x_hat = centred * inv_sigma  # (..., d)
    g = dy if gamma is None else dy * np.asarray(gamma, dtype=np.float64)  # (..., d)
    dx = g.copy()
    if mean_term:  # the gradient through the mean
        dx -= g.mean(axis=axes, keepdims=True)
    if variance_term:  # the gradient through the variance
        dx -= x_hat * (g * x_hat).mean(axis=axes, keepdims=True)
    return dx * inv_sigma, (dy * x_hat).sum(axis=lead), dy.sum(axis=lead)


def backward_over_the_features(dy, x, gamma=None, eps=1e-5):
    """The backward over the wrong axis: LayerNorm's, with the means over the features."""
    return _backward(dy, x, gamma, eps, axes=(np.ndim(x) - 1,))


def missing_mean_term(dy, x, gamma=None, eps=1e-5):
    """The mean-of-gradient term left out: dx = (g - x_hat * mean(g * x_hat)) / sigma."""
    return _backward(dy, x, gamma, eps, mean_term=False)


def variance_as_a_constant(dy, x, gamma=None, eps=1e-5):
    """The variance treated as a constant: dx = (g - mean(g)) / sigma."""
    return _backward(dy, x, gamma, eps, variance_term=False)


def dgamma_and_dbeta_swapped(dy, x, gamma=None, eps=1e-5):
    """dgamma and dbeta returned in each other's place: (dx, dbeta, dgamma)."""
    dx, dgamma, dbeta = _backward(dy, x, gamma, eps)
    return dx, dbeta, dgamma


def statistics_over_the_first_axis(dy, x, gamma=None, eps=1e-5):
    """Statistics over the first axis only (per token of a (B, T, d) input), not every leading
    axis; dgamma and dbeta are still summed over every leading axis."""
    return _backward(dy, x, gamma, eps, axes=(0,))


BATCH_NORM_BACKWARD = (
    backward_over_the_features,
    missing_mean_term,
    variance_as_a_constant,
    dgamma_and_dbeta_swapped,
    statistics_over_the_first_axis,
)
