"""Train the small network on a classification task, and measure batch-norm's train/eval gap.

One run: Adam (lr 1e-3, as in CS231n's assignment 2) on random mini-batches, seeded, in float32
on the CPU, on the spirals or the UCI digits (`data.classification_task`). With `eval_every`
the run also follows its validation accuracy, for choosing a learning rate and for how many
steps it took to reach a target. The same seed gives the same initial weights and the same
batches to every normalization, so two runs differ only in their norm.

Batch-norm (Ioffe and Szegedy, 2015, arXiv:1502.03167) computes different functions in its two
modes: in train mode each record is normalized with its batch's statistics, in eval mode with
running averages collected during training. The run reports accuracy on the training records
both ways; the difference is the train/eval gap. LayerNorm (Ba, Kiros and Hinton, 2016,
arXiv:1607.06450) and RMSNorm read each record alone, so their gap is zero by construction.

With `track_updates` the run also records Karpathy's update-to-data ratio (makemore, part 3):
for every linear layer's weight, log10 of the standard deviation of the step Adam just took over
the standard deviation of the weight itself. Around -3 the weights move by a thousandth of their
size per step; much higher and they churn, much lower and they hardly learn.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .curves import tail_mean
from .data import classification_task
from .layer_stats import LayerStats, layer_stats
from .mlp import MLP


@dataclass
class ClassifierRun:
    """What one training run measured. Losses are cross-entropy in nats."""

    norm: str
    batch_size: int
    seed: int
    losses: np.ndarray  # (steps,) the loss of each mini-batch, train mode
    train_loss_eval_mode: float  # every training record at once, running statistics
    test_accuracy: float  # held-out spirals, eval mode
    train_accuracy_train_mode: float  # training records, batch statistics (batches of B)
    train_accuracy_eval_mode: float  # the same records, running statistics
    stats_init: LayerStats | None
    stats_final: LayerStats | None
    model: MLP
    update_ratios: np.ndarray | None = None  # (steps, depth + 1) log10 step/weight, per linear
    initial_weights: list[np.ndarray] | None = None  # every linear's weight before step 0
    task: str = "spirals"
    val_accuracy: float = float("nan")  # validation records, eval mode, after the last step
    val_curve: np.ndarray | None = None  # (k, 2): step, validation accuracy (eval_every)
    weight_growth: float = float("nan")  # mean over hidden linears of ||W_end|| / ||W_start||
    saturated: float = float("nan")  # share of hidden tanh outputs beyond 0.99, training records

    def relative_weight_change(self) -> np.ndarray:
        """(depth + 1,) ||W_end - W_start|| / ||W_start|| per linear (needs track_updates)."""
        if self.initial_weights is None:
            raise ValueError("relative_weight_change needs a run with track_updates=True")
        ends = [linear.weight.detach().numpy() for linear in _linears(self.model)]
        return np.array(
            [
                np.linalg.norm(end - start) / np.linalg.norm(start)
                for end, start in zip(ends, self.initial_weights, strict=True)
            ]
        )

    @property
    def initial_loss(self) -> float:
        """The loss of the first mini-batch, before any step (ln 3 for a blind 3-class guess)."""
        return float(self.losses[0])

    @property
    def final_loss(self) -> float:
        """Mean mini-batch loss over the last tenth of the steps."""
        return tail_mean(self.losses, share=10)

    @property
    def train_eval_gap(self) -> float:
        """Training accuracy with batch statistics minus with running statistics."""
        return self.train_accuracy_train_mode - self.train_accuracy_eval_mode


def _linears(model: MLP) -> list[nn.Linear]:
    """The hidden linears, then the read-out: the layers whose weights the ratios follow."""
    return [*model.linears, model.readout]


def _accuracy(logits: torch.Tensor, y: torch.Tensor) -> float:
    return float((logits.argmax(dim=1) == y).float().mean())


@torch.no_grad()
def _saturation(model: MLP, x: torch.Tensor) -> float:
    """The share of hidden units whose tanh output is beyond +-0.99 (eval mode), over records."""
    hidden = model.eval().forward_with_hidden(x)[1]
    return float(torch.stack([(h.abs() > 0.99).float().mean() for h in hidden]).mean())


@torch.no_grad()
def _accuracy_both_modes(model: MLP, x, y, batch_size: int, generator) -> tuple[float, float]:
    """Accuracy on the same records in shuffled full batches: in train mode, in eval mode.

    Train mode runs on a copy, so batch-norm's running statistics are not moved by it.
    """
    order = torch.randperm(len(x), generator=generator)
    batches = order[: len(x) // batch_size * batch_size].view(-1, batch_size)  # (n, B)
    accuracies = []
    for probe in (copy.deepcopy(model).train(), model.eval()):
        hits = torch.cat([probe(x[b]).argmax(dim=1) == y[b] for b in batches])
        accuracies.append(float(hits.float().mean()))
    return accuracies[0], accuracies[1]


def _update_ratios(weights: list[torch.Tensor], before: list[torch.Tensor]) -> list[float]:
    """log10(std(w - w_before) / std(w_before)) for each weight: the step relative to the weight."""
    return [
        float(torch.log10((w - b).std() / b.std())) for w, b in zip(weights, before, strict=True)
    ]


def train_classifier(
    norm: str,
    *,
    batch_size: int = 64,
    steps: int = 600,
    lr: float = 1e-3,
    depth: int = 6,
    width: int = 64,
    init_scale: float | None = None,
    points_per_class: int = 200,
    turns: float = 1.25,
    seed: int = 0,
    data_seed: int = 0,
    snapshot: bool = False,
    track_updates: bool = False,
    task: str = "spirals",
    eval_every: int | None = None,
) -> ClassifierRun:
    """Train MLP(norm) on `task` with Adam; `snapshot` keeps layer stats at both ends.

    `task` is "spirals" (3 arms of `points_per_class` points, `turns` turns) or "digits"
    (`data.classification_task`). `seed` fixes the initial weights and the order of the
    batches; `data_seed` the records (spirals: training set from data_seed, test set from
    data_seed + 1, validation from data_seed + 2). `init_scale` is the hidden linears'
    initialisation as a multiple of Kaiming's for tanh (None: torch's default).
    `track_updates` records every linear weight's update-to-data ratio at every step;
    `eval_every` the validation accuracy every that many steps (and after the last).
    """
    if batch_size < 1 or steps < 1 or not lr > 0:
        raise ValueError(
            f"need batch_size >= 1, steps >= 1, lr > 0; got {batch_size}, {steps}, {lr!r}"
        )
    if eval_every is not None and eval_every < 1:
        raise ValueError(f"eval_every must be None or >= 1; got {eval_every!r}")
    if norm == "batch_norm" and batch_size < 2:
        raise ValueError("batch_norm needs batch_size >= 2: one record has no batch statistics")
    data = classification_task(
        task, points_per_class=points_per_class, turns=turns, data_seed=data_seed
    )
    x, y = data.x_train, data.y_train  # (N, inputs), (N,)
    if batch_size > len(x):
        raise ValueError(f"batch_size {batch_size} exceeds the {len(x)} training records")
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = MLP(
        norm,
        inputs=data.inputs,
        classes=data.classes,
        depth=depth,
        width=width,
        init_scale=init_scale,
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)
    stats_init = layer_stats(model, x, y) if snapshot else None
    weights = [linear.weight for linear in _linears(model)]
    ratios = np.empty((steps, len(weights))) if track_updates else None
    initial = [w.detach().numpy().copy() for w in weights] if track_updates else None
    start_norms = [float(linear.weight.detach().norm()) for linear in model.linears]
    curve = []

    losses = np.empty(steps)
    model.train()
    for step in range(steps):
        if eval_every and step % eval_every == 0:
            curve.append((step, _eval_accuracy(model, data.x_val, data.y_val)))
        batch = torch.randperm(len(x), generator=generator)[:batch_size]  # (B,)
        loss = nn.functional.cross_entropy(model(x[batch]), y[batch])
        optimizer.zero_grad()
        loss.backward()
        before = [w.detach().clone() for w in weights] if track_updates else None
        optimizer.step()
        losses[step] = loss.item()
        if track_updates:
            with torch.no_grad():
                ratios[step] = _update_ratios(weights, before)

    train_mode, eval_mode = _accuracy_both_modes(model, x, y, batch_size, generator)
    with torch.no_grad():
        train_loss = float(nn.functional.cross_entropy(model.eval()(x), y))
        test = _accuracy(model(data.x_test), data.y_test)
    val = _eval_accuracy(model, data.x_val, data.y_val)
    if eval_every:
        curve.append((steps, val))
    growth = np.mean(
        [
            float(lin.weight.detach().norm()) / n
            for lin, n in zip(model.linears, start_norms, strict=True)
        ]
    )
    return ClassifierRun(
        norm=norm,
        batch_size=batch_size,
        seed=seed,
        losses=losses,
        train_loss_eval_mode=train_loss,
        test_accuracy=test,
        train_accuracy_train_mode=train_mode,
        train_accuracy_eval_mode=eval_mode,
        stats_init=stats_init,
        stats_final=layer_stats(model, x, y) if snapshot else None,
        model=model,
        update_ratios=ratios,
        initial_weights=initial,
        task=task,
        val_accuracy=val,
        val_curve=np.array(curve) if eval_every else None,
        weight_growth=float(growth),
        saturated=_saturation(model, x),
    )


@torch.no_grad()
def _eval_accuracy(model: MLP, x: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy in eval mode (running statistics); the model is left in train mode."""
    accuracy = _accuracy(model.eval()(x), y)
    model.train()
    return accuracy
