"""The training chapter's data: two tasks made in code from a seed, and one real set on disk.

Nothing is downloaded.

`spirals`: the classic interleaved spirals (CS231n's toy classification set), `classes` arms
of points in the plane; no straight line separates them, so a network needs its depth.
`digits`: the UCI optical digits (Alpaydin and Kaynak, 1998; CC BY 4.0), 1,797 8x8 images of
handwritten digits, vendored in `normlab/data/digits.csv.gz` (its licence beside it).
`classification_task`: either one split into training, validation and test records.
`reversal_batch`: random token sequences and the same sequences reversed, a task a
transformer solves only by attending to another position (the target of position t is the
token at T - 1 - t), so its attention and positional embeddings must both learn.
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass
from importlib import resources

import numpy as np
import torch

TASKS = ("spirals", "digits")
DIGITS_HELD_OUT = 360  # records each for validation and test; the other 1,077 train


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


def digits() -> tuple[torch.Tensor, torch.Tensor]:
    """All 1,797 digit images as inputs (1797, 64) float32 in [0, 1] and labels (1797,) int64.

    Pixels count the ink in 4x4 blocks of a 32x32 bitmap (0 to 16); they are divided by 16.
    """
    raw = resources.files("normlab").joinpath("data/digits.csv.gz").read_bytes()
    table = np.loadtxt(gzip.decompress(raw).decode().splitlines(), delimiter=",")  # (1797, 65)
    return (
        torch.from_numpy(table[:, :64] / 16.0).float(),
        torch.from_numpy(table[:, 64]).long(),
    )


@dataclass(frozen=True)
class Task:
    """A classification task split three ways: fit on train, choose on val, report test."""

    name: str
    x_train: torch.Tensor  # (N, inputs)
    y_train: torch.Tensor  # (N,)
    x_val: torch.Tensor
    y_val: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor

    @property
    def inputs(self) -> int:
        return self.x_train.shape[1]

    @property
    def classes(self) -> int:
        return int(self.y_train.max()) + 1


def classification_task(
    name: str = "spirals", *, points_per_class: int = 200, turns: float = 1.25, data_seed: int = 0
) -> Task:
    """The task `name` ("spirals" or "digits"), split into training, validation and test records.

    spirals: three draws of the same arms, seeds data_seed (train), data_seed + 1 (test) and
    data_seed + 2 (validation). digits: one shuffle (seed data_seed) of the 1,797 images, 360
    for test, 360 for validation, 1,077 to train on; `points_per_class` and `turns` are unused.
    """
    if name == "spirals":
        draw = [spirals(points_per_class, turns=turns, seed=data_seed + k) for k in (0, 2, 1)]
        return Task(name, *draw[0], *draw[1], *draw[2])
    if name == "digits":
        x, y = digits()
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(data_seed))
        test, val = order[:DIGITS_HELD_OUT], order[DIGITS_HELD_OUT : 2 * DIGITS_HELD_OUT]
        train = order[2 * DIGITS_HELD_OUT :]
        return Task(name, x[train], y[train], x[val], y[val], x[test], y[test])
    raise ValueError(f"task must be one of {TASKS}; got {name!r}")
