"""ps8's model: a small network on the spirals, with the normalization as a parameter.

The problem set `ps8_in_a_model` puts the student's `LayerNorm` class inside this network and
trains it; its training check compares the run with the same run using `torch.nn.LayerNorm`
(the grader's side computes that one). It is chapter 9's task at a smaller size: points on
three interleaved spiral arms (CS231n's toy set), a stack of hidden layers, each **Linear,
then the norm, then tanh** (the layout of Ioffe and Szegedy, 2015, arXiv:1502.03167, and of
Karpathy's makemore), then a linear read-out.

`train_losses(norm)` is one short run: float64, the same seed for the weights and the
mini-batches whatever the norm, Adam (chapter 9's optimizer), one loss per step. Two runs
that differ only in the norm class give the same curve when the two classes compute the same
function with the same initial parameters; a class that computes something else, or starts
elsewhere, or whose parameters do not train, gives another curve.

`network` and `train_losses` import torch when they are called: importing this module (the
grader's checks read `RUN`) costs NumPy only. The data is made with NumPy from a seed,
nothing is downloaded.
"""

from __future__ import annotations

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
    float64, on one thread: the linears start from torch's default initialisation drawn from
    `seed`, the mini-batches come from `seed` too (the caller's random state and number of
    threads are left as they were)."""
    import torch
    from torch.nn import functional as F

    inputs, labels = spirals(points_per_class, seed=seed)
    inputs, labels = torch.from_numpy(inputs), torch.from_numpy(labels)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread is fastest, and the run reproducible
    try:
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
    finally:
        torch.set_num_threads(threads)
    return losses
