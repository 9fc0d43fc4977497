"""ps8's model: a small network on the spirals, with the normalization as a parameter.

Chapter 9's task at a smaller size: points on three interleaved spiral arms (CS231n's toy set),
hidden layers of **Linear, then the norm, then tanh** (the layout of Ioffe and Szegedy, 2015,
arXiv:1502.03167, and of Karpathy's makemore), a linear read-out. `train_losses(norm)` is one
short float64 run, the same seeds whatever the norm: two norm classes that compute the same
function from the same initial parameters give the same curve, anything else another.
`network` and `train_losses` import torch when called; importing this module costs NumPy only.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

# the run the training check makes (the grader's reference run uses the same values)
RUN = {
    "seed": 0,
    "steps": 100,
    "lr": 0.01,
    "width": 32,
    "depth": 3,
    "batch": 64,
    "points_per_class": 100,
}


def spirals(points_per_class: int, *, classes: int = 3, turns: float = 1.0, seed: int = 0):
    """Points on `classes` spiral arms of `turns` turns, radius 0.05 to 1, with angle noise.

    Returns inputs (N, 2) float64 and labels (N,) int64, N = classes * points_per_class."""
    rng = np.random.default_rng(seed)
    radius = np.linspace(0.05, 1.0, points_per_class)  # (n,)
    inputs, labels = [], []
    for k in range(classes):
        # arm k: angle = 2 pi (turns * r + k / classes), plus Gaussian noise in radians
        angle = 2 * np.pi * (turns * radius + k / classes)
        angle = angle + 0.2 * rng.standard_normal(points_per_class)  # (n,)
        inputs.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1))
        labels.append(np.full(points_per_class, k, dtype=np.int64))
    return np.concatenate(inputs), np.concatenate(labels)  # (N, 2), (N,)


@contextmanager
def one_thread():
    """torch on one thread while the block runs (tiny tensors: one thread is fastest, and a run
    reproducible), and on as many as before after it."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def network(norm, *, width: int, depth: int, classes: int = 3):
    """`depth` hidden layers of `width` units, each Linear -> norm(width) -> tanh, then a
    linear read-out to the classes; `norm` is a class (or any callable) taking the width."""
    from torch import nn

    layers = []
    for fan_in in [2] + [width] * (depth - 1):
        layers += [nn.Linear(fan_in, width), norm(width), nn.Tanh()]  # (B, width)
    return nn.Sequential(*layers, nn.Linear(width, classes))  # (B, classes)


def train_losses(
    norm,
    *,
    seed: int = RUN["seed"],
    steps: int = RUN["steps"],
    lr: float = RUN["lr"],
    width: int = RUN["width"],
    depth: int = RUN["depth"],
    batch: int = RUN["batch"],
    points_per_class: int = RUN["points_per_class"],
) -> np.ndarray:
    """The loss (cross-entropy, nats) of each of `steps` Adam steps of `network(norm)` in
    float64 on one thread, initialisation and mini-batches from `seed` (the caller's random
    state and threads left as they were)."""
    import torch
    from torch.nn import functional as F

    inputs, labels = spirals(points_per_class, seed=seed)
    inputs, labels = torch.from_numpy(inputs), torch.from_numpy(labels)
    with one_thread():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = network(norm, width=width, depth=depth).double()
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        order = np.random.default_rng(seed)
        losses = np.empty(steps)
        for step in range(steps):
            picked = torch.from_numpy(order.choice(len(labels), size=batch, replace=False))
            loss = F.cross_entropy(model(inputs[picked]), labels[picked])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses[step] = loss.item()
    return losses
