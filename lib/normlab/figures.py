"""One look for every figure of the course: the chapters, the benchmark and the class report.

A figure here is a plain `matplotlib.figure.Figure` (no pyplot, no global figure list), in one
style, with colours that mean the same thing everywhere: LayerNorm (Ba, Kiros and Hinton, 2016,
arXiv:1607.06450) is always blue, batch-norm always orange, RMSNorm always green, the red team
always vermillion. The palette is Okabe and Ito's, which stays distinguishable under the common
colour-vision deficiencies.

    from normlab import figures
    fig, ax = figures.new(width=6, height=3)
    ax.plot(x, y, color=figures.color("layer_norm"), label="LayerNorm")
    fig                       # in a notebook: shown as a PNG (figures.new registers it)
    figures.save(fig, "results/speed.png")   # in a script: PNG or SVG by suffix

`draw_record_block` draws a (B, T, d) block of records in 3-D and lights the cells that share
one set of statistics under LayerNorm, batch-norm or RMSNorm (chapter 5); `draw_block` draws
any such block from a mask, as in Wu and He's Figure 2 (2018, arXiv:1803.08494), for the
family of batch-norm, LayerNorm, InstanceNorm and GroupNorm (`normlab.family`).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

# Okabe and Ito (2008), "Color Universal Design": one hue per meaning.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}

COLORS = {
    # the normalizations
    "layer_norm": OKABE_ITO["blue"],
    "batch_norm": OKABE_ITO["orange"],
    "rms_norm": OKABE_ITO["green"],
    "instance_norm": OKABE_ITO["purple"],
    "group_norm": OKABE_ITO["sky"],
    "dyt": OKABE_ITO["vermillion"],  # Dynamic Tanh (chapter 13): no statistics at all
    # the panel's two teams
    "blue_team": OKABE_ITO["blue"],
    "red_team": OKABE_ITO["vermillion"],
    # placement (chapter 8)
    "pre_ln": OKABE_ITO["blue"],
    "post_ln": OKABE_ITO["vermillion"],
    # attention with and without QK-norm (chapter 8)
    "qk_norm": OKABE_ITO["blue"],
    "plain_attention": OKABE_ITO["vermillion"],
    # numerics (chapter 11)
    "two_pass": OKABE_ITO["blue"],
    "one_pass": OKABE_ITO["vermillion"],
    # benchmark implementations (normlab.bench)
    "numpy_naive": OKABE_ITO["purple"],
    "numpy_fast": OKABE_ITO["blue"],
    "torch_cpu": OKABE_ITO["orange"],
    "torch_cuda": OKABE_ITO["green"],
    "numpy_copy": "#7F7F7F",
    "torch_cuda_copy": "#4D4D4D",
    # the roofline: measured copy bandwidth of our runs
    "cpu_roof": OKABE_ITO["orange"],
    "cuda_roof": OKABE_ITO["green"],
    # neutral roles
    "reference": "#4D4D4D",
    "muted": "#D9DDE3",
    "grid": "#E6E8EC",
}

STYLE = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "figure.facecolor": "white",
    "savefig.dpi": 150,
    "savefig.facecolor": "white",
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.edgecolor": "#4D4D4D",
    "axes.linewidth": 0.8,
    "axes.grid": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": matplotlib.cycler(
        color=[OKABE_ITO[k] for k in ("blue", "orange", "green", "vermillion", "purple", "sky")]
    ),
    "grid.color": COLORS["grid"],
    "grid.linewidth": 0.8,
    "lines.linewidth": 2.0,
    "lines.markersize": 5,
    "legend.frameon": False,
    "legend.fontsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "image.cmap": "RdBu_r",
    "svg.fonttype": "path",  # text as outlines: an SVG never asks for a font
}


def color(name: str) -> str:
    """The course's colour for a role (`COLORS`), e.g. color("layer_norm")."""
    try:
        return COLORS[name]
    except KeyError:
        raise KeyError(f"no colour named {name!r}; have {sorted(COLORS)}") from None


def use() -> None:
    """Apply the course style; inside Jupyter, also show a Figure as a crisp PNG."""
    matplotlib.rcParams.update(STYLE)
    try:
        from IPython import get_ipython
    except ImportError:  # a plain script: nothing to register
        return
    if get_ipython() is not None:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("retina")


def new(
    nrows: int = 1,
    ncols: int = 1,
    *,
    width: float = 6.4,
    height: float = 3.6,
    sharex: bool | str = False,
    sharey: bool | str = False,
    **subplot_kw,
):
    """A new Figure in the course style and its axes (one Axes, or an array of them).

    `sharex` / `sharey` as matplotlib's `subplots` ("row", "col", True); other keywords go to
    every Axes (e.g. projection="3d").
    """
    use()
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(
        nrows, ncols, squeeze=True, sharex=sharex, sharey=sharey, subplot_kw=subplot_kw or None
    )
    return fig, axes


def save(fig: Figure, path, *, dpi: int | None = None) -> Path:
    """Write the figure to `path` (.png or .svg, folders made as needed); return the Path."""
    path = Path(path)
    if path.suffix not in (".png", ".svg"):
        raise ValueError(f"save a figure as .png or .svg; got {path.name!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi or STYLE["savefig.dpi"])
    return path


# -- chapter 5: which cells of a (B, T, d) block share statistics ---------------------------------

SHARING = ("layer_norm", "batch_norm", "rms_norm")


def shared_cells(kind: str, shape: tuple[int, int, int], record=(0, 0), feature: int = 0):
    """Boolean (B, T, d) mask of the cells that share one set of statistics.

    LayerNorm and RMSNorm: the d features of one record (b, t). Batch-norm: one feature k
    across every record of the batch, all B * T of them.
    """
    if kind not in SHARING:
        raise ValueError(f"kind must be one of {SHARING}; got {kind!r}")
    mask = np.zeros(shape, dtype=bool)  # (B, T, d)
    if kind == "batch_norm":
        mask[:, :, feature] = True
    else:
        mask[record[0], record[1], :] = True
    return mask


def _exploded(filled: np.ndarray) -> np.ndarray:
    """Spread voxels apart: (n, m, k) -> (2n - 1, 2m - 1, 2k - 1) with empty slots between."""
    spread = np.zeros(np.array(filled.shape) * 2 - 1, dtype=filled.dtype)
    spread[::2, ::2, ::2] = filled
    return spread


def _exploded_corners(shape, gap: float = 0.18):
    """Corner coordinates for `_exploded` voxels: unit cells separated by `gap`."""
    axes = []
    for n in shape:
        edges = np.zeros(2 * n)  # corners of 2n - 1 slots
        for i in range(2 * n):
            edges[i] = (i // 2) * (1 + gap) + (i % 2)
        axes.append(edges)
    return np.meshgrid(*axes, indexing="ij")


def draw_block(ax, lit: np.ndarray, color_name: str, labels: tuple[str, str, str]) -> None:
    """Draw a 3-D block of cells on a 3-D Axes; the cells where `lit` is True are solid.

    `lit` has shape (depth, down, across): the batch into the page, positions (tokens, or an
    image's pixels) down, features or channels across. `labels` name the (across, depth, down)
    axes. Every other cell is a faint ghost, so lit cells inside the block stay visible.
    """
    depth, down, across = lit.shape
    # voxel axes: x = across, y = depth, z = down (row 0 on top)
    lit_xyz = np.transpose(lit, (2, 0, 1))[:, :, ::-1]  # (across, depth, down)
    x, y, z = _exploded_corners(lit_xyz.shape)
    ax.voxels(
        x,
        y,
        z,
        _exploded(~lit_xyz),
        facecolors=COLORS["muted"] + "40",
        edgecolors="#B8BFC7",
        linewidth=0.3,
    )
    ax.voxels(
        x,
        y,
        z,
        _exploded(lit_xyz),
        facecolors=color(color_name) + "F0",
        edgecolors="#1A1A1A",
        linewidth=0.5,
    )
    ax.set_box_aspect((across, depth * 1.3, down), zoom=1.1)
    ax.view_init(elev=20, azim=-60)
    ax.set_axis_off()
    # axis names beside the block's edges, projected to 2-D (3-D text would be clipped), a
    # cell's width away from the wireframe so they never sit on it
    across_label, depth_label, down_label = labels
    ends = [c.max() for c in (x, y, z)]  # the block's far corner
    text = {"fontsize": 9, "ha": "center", "va": "center"}
    _edge_label(ax, (ends[0] / 2, -1.0, -0.8), f"{across_label}  \u2192", rotation=-8, **text)
    _edge_label(
        ax, (ends[0] + 1.0, ends[1] / 2, -0.8), f"{depth_label}  \u2192", rotation=38, **text
    )
    _edge_label(ax, (-1.2, -0.5, ends[2] / 2), f"\u2190  {down_label}", rotation=90, **text)


def _edge_label(ax, point, label: str, **text) -> None:
    """Write `label` at the 3-D `point`, projected onto the Axes' 2-D plane."""
    from mpl_toolkits.mplot3d import proj3d

    px, py, _ = proj3d.proj_transform(*point, ax.get_proj())
    ax.text2D(px, py, label, transform=ax.transData, **text)


def draw_record_block(ax, kind: str, shape=(3, 4, 6), record=(0, 1), feature: int = 2) -> None:
    """Draw a (B, T, d) block on a 3-D Axes, lighting the cells that share statistics.

    Features run across, the batch runs into the page, tokens run down, as a transformer
    stores its activations.
    """
    batch, tokens, d = shape
    lit = shared_cells(kind, shape, record=record, feature=feature)  # (B, T, d)
    labels = (f"features d = {d}", f"batch B = {batch}", f"tokens T = {tokens}")
    draw_block(ax, lit, kind, labels)


# -- chapters 1 and 9: what each layer of a deep network holds ----------------------------------


def layer_colors(n: int) -> list:
    """n colours from dark (the first layer) to light (the last), viridis: tellable apart."""
    cmap = matplotlib.colormaps["viridis"]
    return [cmap(0.9 * i / max(n - 1, 1)) for i in range(n)]


def draw_layer_densities(ax, values, bins, *, label: bool = False) -> None:
    """One density curve per layer on `ax` (values: one array per layer), coloured by depth."""
    bins = np.asarray(bins)
    centres = (bins[:-1] + bins[1:]) / 2
    for layer, (v, shade) in enumerate(zip(values, layer_colors(len(values)), strict=True)):
        density, _ = np.histogram(v, bins=bins, density=True)
        ax.plot(
            centres,
            density,
            color=shade,
            linewidth=1.2,
            label=f"layer {layer + 1}" if label else None,
        )


def draw_median_band(ax, x, curves, color_value, *, label=None, linestyle="-", alpha=0.2):
    """The median of several curves (one per seed, rows of `curves`) and the band they span."""
    curves = np.asarray(curves, dtype=float)  # (seeds, len(x))
    ax.fill_between(
        x, curves.min(axis=0), curves.max(axis=0), color=color_value, alpha=alpha, linewidth=0
    )
    ax.plot(x, np.median(curves, axis=0), color=color_value, linestyle=linestyle, label=label)


# -- chapter 8: the residual stream, layer by layer ---------------------------------------------

PLACEMENT_NAMES = {"pre_ln": "pre-LN", "post_ln": "post-LN"}


def draw_stream_rms(ax, stream: dict[str, np.ndarray]) -> None:
    """The residual stream's RMS after each block, per placement ("pre_ln", "post_ln").

    `stream[placement]` has one row per initialisation (seed) and one value per block, block 1
    first (the rows of `placement.gradient_norms_by_seed`'s "stream"): the line is their mean,
    the band spans the lowest to the highest seed. Pre-LN adds every branch to an
    un-normalized stream, post-LN renormalizes it.
    """
    for placement, runs in stream.items():
        runs = np.atleast_2d(np.asarray(runs, dtype=float))  # (seeds, blocks)
        layers = np.arange(1, runs.shape[1] + 1)
        marker = "s-" if placement == "pre_ln" else "o-"
        label = f"{PLACEMENT_NAMES[placement]}: mean, band = range of {len(runs)} seeds"
        shade = color(placement)
        ax.fill_between(layers, runs.min(axis=0), runs.max(axis=0), color=shade, alpha=0.2, lw=0)
        ax.plot(layers, runs.mean(axis=0), marker, color=shade, label=label)
    ax.set(xlabel="block (1 = nearest the input)", ylabel="RMS of the residual stream")
    ax.set_ylim(0, None)
    ax.legend()


# -- chapter 9: the recorded training sweep, one norm's settings at a glance --------------------


def draw_heatmap(ax, values, rows, columns, *, vmin=0.0, vmax=1.0, cmap="viridis", fmt="{:.2f}"):
    """`values` (len(rows), len(columns)) as coloured cells, each value written in its cell.

    Viridis runs from dark (vmin) to light (vmax) and stays readable in grey and under the
    common colour-vision deficiencies; the text is white on the dark half, black on the light.
    Returns the image, for a colour bar.
    """
    values = np.asarray(values, dtype=float)
    if values.shape != (len(rows), len(columns)):
        raise ValueError(f"values of shape {values.shape} for {len(rows)} x {len(columns)} cells")
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, origin="lower", aspect="auto")
    for (i, j), value in np.ndenumerate(values):
        dark = (value - vmin) / (vmax - vmin) < 0.6
        ax.text(
            j,
            i,
            fmt.format(value),
            ha="center",
            va="center",
            fontsize=7,
            color="white" if dark else "black",
        )
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(rows)), rows)
    ax.grid(False)
    return image


def draw_heatmap_grid(maps, xlabel: str, ylabel: str, colorbar_label: str, width=10.0, height=9.0):
    """A grid of `draw_heatmap`s: `maps` rows of (title, values, row_labels, column_labels),
    one colour bar for all (their values on draw_heatmap's one scale). Returns the figure."""
    fig, axes = new(len(maps), len(maps[0]), width=width, height=height, sharex=True)
    for row, panels in enumerate(maps):
        for col, (title, values, rows, columns) in enumerate(panels):
            image = draw_heatmap(axes[row, col], values, rows, columns)
            axes[row, col].set_title(title, fontsize=8)
            axes[row, col].tick_params(axis="x", labelrotation=45)
        axes[row, 0].set_ylabel(ylabel)
    for ax in axes[-1]:
        ax.set_xlabel(xlabel)
    fig.colorbar(image, ax=axes, shrink=0.6, label=colorbar_label)
    return fig
