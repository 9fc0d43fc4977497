"""Which outputs move when one input moves: dy/dx across a batch (chapter 5).

A normalization of a batch of n records of d features is one function of all n * d numbers.
Its Jacobian, J[i, j] = d y_i / d x_j over the flattened batch (record by record), shows who
reads whom. LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) takes each record's
statistics from that record alone, so J is block-diagonal: one d x d block per record, zero
everywhere else. Batch-norm in training mode (Ioffe and Szegedy, 2015, arXiv:1502.03167) takes
each feature's statistics over the batch, so output (r, k) depends on feature k of every record:
entries outside the record's own block.

`batch_jacobian` reads J off a backward pass: fed the upstream gradient e_i (one output that
matters), a backward returns dx = J^T e_i, the i-th row of J. `jacobian_figure` draws |J| of
both norms side by side.
"""

from __future__ import annotations

import numpy as np

from . import figures
from .backward import batch_norm_backward, layer_norm_backward

BACKWARDS = {"layer_norm": layer_norm_backward, "batch_norm": batch_norm_backward}
TITLES = {"layer_norm": "LayerNorm", "batch_norm": "batch-norm (training)"}


def batch_jacobian(backward, x) -> np.ndarray:
    """J of the norm whose backward is `backward` at the batch x (n, d): shape (n*d, n*d).

    `backward(dy, x)` returns (dx, ...), as `layer_norm_backward` does; row i of J is the dx
    it returns for a dy that is 1 at output i and 0 elsewhere.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must be a batch of records, shape (n, d); got {x.shape}")
    size = x.size
    rows = []
    for i in range(size):
        dy = np.zeros(size)
        dy[i] = 1.0  # only output i matters
        dx = backward(dy.reshape(x.shape), x)[0]  # (n, d)
        rows.append(dx.reshape(-1))
    return np.array(rows)  # (n*d, n*d)


def off_record_share(jacobian: np.ndarray, d: int, tol: float = 1e-12) -> float:
    """The share of J's entries outside the records' own d x d blocks that are not zero."""
    n = jacobian.shape[0] // d
    record = np.arange(n * d) // d  # the record of each flattened index
    outside = record[:, None] != record[None, :]  # (n*d, n*d)
    return float(np.mean(np.abs(jacobian[outside]) > tol))


def jacobian_figure(x):
    """|dy/dx| of LayerNorm and of batch-norm on the batch x (n, d), side by side.

    White is exactly zero; thin lines separate the records. Returns the Figure.
    """
    x = np.asarray(x, dtype=np.float64)
    n, d = x.shape
    fig, axes = figures.new(1, 2, width=9.0, height=4.4)
    ticks = np.arange(n) * d + (d - 1) / 2  # the middle of each record's block
    for ax, kind in zip(axes, BACKWARDS, strict=True):
        size = np.abs(batch_jacobian(BACKWARDS[kind], x))  # (n*d, n*d)
        shown = np.ma.masked_where(size < 1e-12, size)  # exact zeros stay white
        image = ax.imshow(shown, cmap="Blues", vmin=0.0, interpolation="nearest")
        for edge in np.arange(1, n) * d - 0.5:
            ax.axhline(edge, color=figures.color("reference"), linewidth=0.6)
            ax.axvline(edge, color=figures.color("reference"), linewidth=0.6)
        ax.set_xticks(ticks, [f"record {r + 1}" for r in range(n)], fontsize=8)
        ax.set_yticks(ticks, [f"record {r + 1}" for r in range(n)], fontsize=8)
        ax.set(xlabel="input x (d features per record)", ylabel="output y")
        ax.grid(False)
        ax.set_title(TITLES[kind], fontsize=10)
        fig.colorbar(image, ax=ax, shrink=0.8, label="|dy/dx|")
    return fig
