"""The computational graph of LayerNorm's six stages, drawn from the stages themselves (chapter 10).

Layer normalization (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) of one record is the chain
of `normlab.backward_stages.STAGES`; each stage class names its inputs (`inputs`). The graph's
edges are read from those names, so the picture cannot drift from the code: an arrow runs from
each input to the value its stage computes (`OUTPUTS`). A value with two outgoing arrows
(`fan_out`: x feeds Mean and Centre, xc feeds Variance and XHat) receives two gradients on the
way back, and backpropagation adds them.
"""

from __future__ import annotations

from matplotlib.patches import FancyArrowPatch

from . import figures
from .backward_stages import STAGES, Centre, InverseStd, Mean, ScaleShift, Variance, XHat

OUTPUTS = {Mean: "mu", Centre: "xc", Variance: "var", InverseStd: "inv_std", XHat: "x_hat",
           ScaleShift: "y"}  # fmt: skip
LABELS = {
    "x": "$x$",
    "mu": "$\\mu$",
    "xc": "$x^c$",
    "var": "$v$",
    "inv_std": "$s$",
    "x_hat": "$\\hat{x}$",
    "y": "$y$",
    "gamma": "$\\gamma$",
    "beta": "$\\beta$",
}
# where each value sits: (column, row); the chain runs left to right, the parameters below it
PLACES = {
    "x": (0, 0),
    "mu": (1, 1),
    "xc": (2, 0),
    "var": (3, 1),
    "inv_std": (4, 1),
    "x_hat": (5, 0),
    "y": (6, 0),
    "gamma": (5, -1),
    "beta": (6, -1),
}


def edges() -> list[tuple[str, str, str]]:
    """(input, output, stage name) for every input of every stage, in the stages' order."""
    return [(name, OUTPUTS[stage], stage.__name__) for stage in STAGES for name in stage.inputs]


def fan_out() -> set[str]:
    """The values that feed more than one stage: their gradients add on the way back."""
    uses: dict[str, int] = {}
    for source, _, _ in edges():
        uses[source] = uses.get(source, 0) + 1
    return {name for name, count in uses.items() if count > 1}


def graph_figure():
    """The six stages as a graph: values in boxes, an arrow per input, labelled by its stage.

    Values that feed two stages are drawn in vermillion, with the note that their two
    gradients add. Returns the Figure.
    """
    fig, ax = figures.new(width=9.5, height=3.6)
    shared = fan_out()
    for name, (col, row) in PLACES.items():
        colour = figures.color("red_team") if name in shared else figures.color("reference")
        ax.text(
            col,
            row,
            LABELS[name],
            ha="center",
            va="center",
            fontsize=14,
            bbox={"boxstyle": "round,pad=0.4", "facecolor": "white", "edgecolor": colour,
                  "linewidth": 2.0 if name in shared else 1.0},
        )  # fmt: skip
    for source, target, _ in edges():
        (x0, y0), (x1, y1) = PLACES[source], PLACES[target]
        arrow = FancyArrowPatch(
            (x0, y0),
            (x1, y1),
            arrowstyle="-|>",
            mutation_scale=12,
            shrinkA=16,
            shrinkB=16,
            color=figures.color("red_team") if source in shared else figures.color("layer_norm"),
            linewidth=1.3,
        )
        ax.add_patch(arrow)
    for stage in STAGES:  # each stage's name beside the value it computes
        col, row = PLACES[OUTPUTS[stage]]
        ax.text(col, row + 0.42, stage.__name__, ha="center", va="bottom", fontsize=8,
                color=figures.color("reference"))  # fmt: skip
    ax.text(
        0.0,
        -1.0,
        "two arrows out: on the way back, their gradients add",
        color=figures.color("red_team"),
        fontsize=9,
        ha="left",
        va="center",
    )
    ax.set(xlim=(-0.6, 6.6), ylim=(-1.5, 1.9))
    ax.set_axis_off()
    return fig
