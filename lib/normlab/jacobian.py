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
both norms side by side, on one logarithmic scale, exact zeros in a colour of their own.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.patches import Patch

from . import figures
from .backward import batch_norm_backward, layer_norm_backward

BACKWARDS = {"layer_norm": layer_norm_backward, "batch_norm": batch_norm_backward}
TITLES = {"layer_norm": "LayerNorm", "batch_norm": "batch-norm (training)"}
ZERO_COLOR = "#D9D9D9"  # a mid-light grey: outside viridis, which runs from purple to yellow


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

    Both panels share one logarithmic colour scale (viridis, from the smallest non-zero
    entry of either to the largest), so a small derivative is never drawn as nothing and
    equal colours mean equal sizes. Entries that are exactly zero are masked and drawn in
    `ZERO_COLOR`, a grey no non-zero entry can take; thin lines separate the records.
    Returns the Figure.
    """
    x = np.asarray(x, dtype=np.float64)
    n, d = x.shape
    sizes = {kind: np.abs(batch_jacobian(BACKWARDS[kind], x)) for kind in BACKWARDS}  # (n*d, n*d)
    nonzero = np.concatenate([size[size > 0] for size in sizes.values()])
    scale = LogNorm(vmin=nonzero.min(), vmax=nonzero.max())  # one scale for both panels
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad=ZERO_COLOR)
    fig, axes = figures.new(1, 2, width=9.0, height=4.4)
    ticks = np.arange(n) * d + (d - 1) / 2  # the middle of each record's block
    for ax, (kind, size) in zip(axes, sizes.items(), strict=True):
        shown = np.ma.masked_equal(size, 0.0)  # exact zeros: the colormap's "bad" colour
        image = ax.imshow(shown, cmap=cmap, norm=scale, interpolation="nearest")
        for edge in np.arange(1, n) * d - 0.5:
            ax.axhline(edge, color="white", linewidth=1.2)
            ax.axvline(edge, color="white", linewidth=1.2)
        ax.set_xticks(ticks, [f"record {r + 1}" for r in range(n)], fontsize=8)
        ax.set_yticks(ticks, [f"record {r + 1}" for r in range(n)], fontsize=8)
        ax.set(xlabel="input x (d features per record)", ylabel="output y")
        ax.grid(False)
        ax.set_title(TITLES[kind], fontsize=10)
    fig.colorbar(image, ax=axes, shrink=0.8, label="|dy/dx| (log scale)")
    zero = Patch(facecolor=ZERO_COLOR, edgecolor=figures.color("reference"), label="exactly 0")
    fig.legend(handles=[zero], loc="outside lower center", frameon=False)
    return fig
