"""Two synthetic tasks, made in code from a seed: nothing is downloaded.

`spirals`: the classic interleaved spirals (CS231n's toy classification set), `classes` arms
of points in the plane; no straight line separates them, so a network needs its depth.
`reversal_batch`: random token sequences and the same sequences reversed, a task a
transformer solves only by attending to another position (the target of position t is the
token at T - 1 - t), so its attention and positional embeddings must both learn.
"""

from __future__ import annotations

import math

import torch


def spirals(
    points_per_class: int,
    *,
    classes: int = 3,
    turns: float = 1.25,
    noise: float = 0.2,
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Points of `classes` spiral arms of `turns` turns each, radius 0.05 to 1, angle noise.

    Returns inputs (N, 2) float32 and labels (N,) int64, N = classes * points_per_class.
    """
    if points_per_class < 1 or classes < 2:
        raise ValueError(
            f"need points_per_class >= 1 and classes >= 2; got {points_per_class}, {classes}"
        )
    generator = torch.Generator().manual_seed(seed)
    radius = torch.linspace(0.05, 1.0, points_per_class)  # (n,)
    xs, ys = [], []
    for k in range(classes):
        # arm k: angle = 2 pi (turns * r + k / classes), plus Gaussian noise in radians
        angle = 2 * math.pi * (turns * radius + k / classes)
        angle = angle + noise * torch.randn(points_per_class, generator=generator)  # (n,)
        xs.append(torch.stack([radius * angle.sin(), radius * angle.cos()], dim=1))  # (n, 2)
        ys.append(torch.full((points_per_class,), k, dtype=torch.int64))
    return torch.cat(xs), torch.cat(ys)  # (N, 2), (N,)


def reversal_batch(
    batch: int, tokens: int, vocab: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random token ids (B, T) and their reversal (B, T): the target of t is input T - 1 - t."""
    if batch < 1 or tokens < 2 or vocab < 2:
        raise ValueError(
            f"need batch >= 1, tokens >= 2, vocab >= 2; got {batch}, {tokens}, {vocab}"
        )
    ids = torch.randint(vocab, (batch, tokens), generator=generator)  # (B, T)
    return ids, ids.flip(1)
