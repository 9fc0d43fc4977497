"""A small transformer trained with pre-LN or post-LN, with or without a warm-up.

Xiong et al. (2020, arXiv:2002.04745) show that at initialisation post-LN (Vaswani et al.,
2017, arXiv:1706.03762) has large gradients near the output, so Adam's first steps at the full
learning rate can throw it off, and the warm-up is what makes it train; pre-LN trains without
one. `train_sequence_model` puts that to a test at a size the CPU can afford: the blocks are
chapter 8's (`normlab.placement.Stack`), the task is to reverse a random token sequence
(`data.reversal_batch`), the optimizer is Adam with Vaswani et al.'s betas (0.9, 0.98), and
only the first `warmup_steps` steps differ between a run with warm-up and one without.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..placement import Stack
from .curves import tail_mean
from .data import reversal_batch
from .schedule import warmup_lr


class SequenceModel(nn.Module):
    """Token and position embeddings, a pre-LN or post-LN `Stack`, a linear read-out."""

    def __init__(
        self, placement: str, *, layers: int, d_model: int, heads: int, tokens: int, vocab: int
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Parameter(torch.randn(tokens, d_model))  # (T, d)
        self.stack = Stack(layers, d_model, heads, placement)
        self.readout = nn.Linear(d_model, vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids) + self.position  # (B, T, d)
        return self.readout(self.stack(h)[0])  # (B, T, vocab)


@dataclass
class SequenceRun:
    """One run's loss per step (NaN after a divergence) and its final token accuracy."""

    placement: str
    warmup_steps: int
    lr: float
    seed: int
    losses: np.ndarray  # (steps,) cross-entropy in nats, each step's fresh batch
    accuracy: float  # share of tokens reversed correctly on a fresh batch after training
    model: SequenceModel | None = None  # the trained network (chapter 13 looks inside it)

    @property
    def final_loss(self) -> float:
        """Mean loss over the last tenth of the steps (NaN if the run diverged)."""
        return tail_mean(self.losses, share=10)


def train_sequence_model(
    placement: str,
    *,
    warmup_steps: int,
    lr: float = 1e-3,
    steps: int = 150,
    layers: int = 6,
    d_model: int = 64,
    heads: int = 4,
    batch: int = 16,
    tokens: int = 12,
    vocab: int = 16,
    seed: int = 0,
) -> SequenceRun:
    """Train SequenceModel(placement) to reverse sequences; lr follows `warmup_lr`."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1; got {steps}")
    warmup_lr(0, lr, warmup_steps)  # checks lr and warmup_steps before any work
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = SequenceModel(
        placement, layers=layers, d_model=d_model, heads=heads, tokens=tokens, vocab=vocab
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), foreach=True)
    losses = np.full(steps, np.nan)
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = warmup_lr(step, lr, warmup_steps)
        ids, target = reversal_batch(batch, tokens, vocab, generator)  # (B, T), (B, T)
        loss = nn.functional.cross_entropy(model(ids).reshape(-1, vocab), target.reshape(-1))
        if not math.isfinite(loss.item()):
            break  # diverged: the remaining steps stay NaN
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses[step] = loss.item()
    with torch.no_grad():
        ids, target = reversal_batch(batch, tokens, vocab, generator)
        accuracy = float((model(ids).argmax(-1) == target).float().mean())
    return SequenceRun(placement, warmup_steps, lr, seed, losses, accuracy, model)
