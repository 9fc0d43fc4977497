"""What each layer of a network holds: its activations and the gradients that reach them.

Karpathy's makemore (part 3, "Activations, gradients, BatchNorm") diagnoses a deep tanh network
by the distribution, layer by layer, of its activations (do they shrink to 0 or saturate at
+-1?) and of the loss's gradient with respect to them (do they vanish or explode with depth?).
`layer_stats` takes that snapshot on one batch. It works on a copy of the model, so taking it
never moves batch-norm's running statistics or any gradient of the model being trained.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .mlp import MLP


@dataclass
class LayerStats:
    """Per hidden layer, every activation (tanh output) and its gradient, flattened."""

    activations: list[np.ndarray]
    gradients: list[np.ndarray]

    def percentiles(self, which: str, q=(5, 25, 50, 75, 95)) -> np.ndarray:
        """(layers, len(q)) percentiles of "activations" or "gradients", layer by layer."""
        if which not in ("activations", "gradients"):
            raise ValueError(f"which must be 'activations' or 'gradients'; got {which!r}")
        return np.array([np.percentile(v, q) for v in getattr(self, which)])

    def std(self, which: str) -> np.ndarray:
        """(layers,) standard deviation of "activations" or "gradients", layer by layer."""
        return np.array([v.std() for v in getattr(self, which)])


def layer_stats(model: MLP, x: torch.Tensor, y: torch.Tensor) -> LayerStats:
    """Activations and loss gradients of every hidden layer on the batch (x, y), train mode."""
    probe = copy.deepcopy(model).train()
    logits, hidden = probe.forward_with_hidden(x)  # (B, classes), depth x (B, width)
    for h in hidden:
        h.retain_grad()
    nn.functional.cross_entropy(logits, y).backward()
    return LayerStats(
        activations=[h.detach().numpy().ravel() for h in hidden],
        gradients=[h.grad.numpy().ravel() for h in hidden],
    )
