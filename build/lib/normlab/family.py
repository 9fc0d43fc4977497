"""The normalization family on one picture: which cells share one set of statistics.

Batch-norm (Ioffe and Szegedy, 2015, arXiv:1502.03167), LayerNorm (Ba, Kiros and Hinton,
2016, arXiv:1607.06450), InstanceNorm (Ulyanov, Vedaldi and Lempitsky, 2016,
arXiv:1607.08022) and GroupNorm (Wu and He, 2018, arXiv:1803.08494) apply one formula and
differ only in the set of cells whose mean and variance they share. Wu and He's Figure 2
draws those sets for images (N, C, H, W); here they are also drawn for tokens (B, T, d).

The sets are not typed in: `shared_with` finds them by running the normalization itself,
normlab's own functions in each layout, and marking every output that moves when one input
cell moves (a normalization's output moves exactly where the moved cell's statistics are
used). The chapter's figure draws these masks.
"""

from __future__ import annotations

import numpy as np

from .batch_norm import batch_norm
from .group_norm import group_norm
from .layer_norm import layer_norm

KINDS = ("batch_norm", "layer_norm", "instance_norm", "group_norm")
TITLES = {
    "batch_norm": "Batch norm",
    "layer_norm": "Layer norm",
    "instance_norm": "Instance norm",
    "group_norm": "Group norm",
}


def image_norms(groups: int) -> dict:
    """Each kind as a function of an image batch x of shape (N, C, H, W), as torch applies it."""

    def channels_last(fn):
        # normlab.batch_norm takes features last: (N, C, H, W) -> (N, H, W, C) and back
        return lambda x: np.moveaxis(fn(np.moveaxis(x, 1, -1)), -1, 1)

    return {
        # BatchNorm2d: one channel over every sample and pixel
        "batch_norm": channels_last(batch_norm),
        # LayerNorm with normalized_shape = (C, H, W): one sample, all of it
        "layer_norm": lambda x: layer_norm(x.reshape(len(x), -1)).reshape(x.shape),
        # InstanceNorm2d: one channel of one sample
        "instance_norm": lambda x: group_norm(x, x.shape[1]),
        # GroupNorm: a group of channels of one sample
        "group_norm": lambda x: group_norm(x, groups),
    }


def token_norms(groups: int) -> dict:
    """Each kind as a function of token activations x of shape (B, T, d), as torch applies it.

    torch's InstanceNorm1d and GroupNorm take channels on axis 1, (B, d, T): the features of
    a transformer are transposed in, and their statistics then run over the sequence's T tokens.
    """

    def features_first(fn):
        return lambda x: np.swapaxes(fn(np.swapaxes(x, 1, 2)), 1, 2)

    return {
        "batch_norm": batch_norm,  # BatchNorm1d on x.reshape(-1, d): one feature, every token
        "layer_norm": layer_norm,  # LayerNorm(d): one token, all its features
        "instance_norm": features_first(lambda x: group_norm(x, x.shape[1])),
        "group_norm": features_first(lambda x: group_norm(x, groups)),
    }


def shared_with(norm, shape, anchor, seed: int = 0) -> np.ndarray:
    """Boolean mask of the cells whose output moves when input cell `anchor` moves.

    Runs `norm` on random data of `shape` and again with the anchor cell moved far away;
    for a normalization, that is the set of cells sharing the anchor cell's statistics.
    """
    x = np.random.default_rng(seed).normal(size=shape)
    moved = x.copy()
    moved[anchor] += 1e3
    return norm(moved) != norm(x)
