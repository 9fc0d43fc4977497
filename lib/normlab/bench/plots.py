"""The speed chapter's figure: GB/s per implementation and d_model, in the course style."""

from __future__ import annotations

import numpy as np

from .. import figures

ORDER = ["numpy_naive", "numpy_fast", "torch_cpu", "torch_cuda", "numpy_copy", "torch_cuda_copy"]


def series_label(record: dict) -> str:
    """How a record is named in legends and tables, e.g. 'torch_cpu, 1 thread'."""
    label = record["impl"]
    if record.get("threads") is not None:
        n = record["threads"]
        label += f", {n} thread" + ("" if n == 1 else "s")
    if record["impl"] == "torch_cuda":
        label += ", torch_twins" if "twins" in record["kernel"] else ", F.layer_norm"
    return label


def _series(records: list[dict]) -> list[str]:
    labels = {series_label(r): r for r in records}

    def rank(label):
        r = labels[label]
        return (ORDER.index(r["impl"]), r.get("threads") or 0, label)

    return sorted(labels, key=rank)


def gb_per_s_figure(records: list[dict], device: str, dtype: str, *, ax=None, title=None):
    """Grouped bars of GB/s, one group per d_model; each LayerNorm bar carries its fraction
    of the copy, the grey bar of each group. Returns the Figure (or None when given `ax`)."""
    chosen = [r for r in records if r["device"] == device and r["dtype"] == dtype]
    if not chosen:
        raise ValueError(f"no {device} {dtype} records to plot")
    fig = None
    if ax is None:
        fig, ax = figures.new(width=7.5, height=3.6)
    d_models = sorted({r["d_model"] for r in chosen})
    labels = _series(chosen)
    width = 0.8 / len(labels)
    for j, label in enumerate(labels):
        xs, heights, fractions = [], [], []
        for i, d in enumerate(d_models):
            r = next((r for r in chosen if r["d_model"] == d and series_label(r) == label), None)
            if r is not None:
                xs.append(i - 0.4 + (j + 0.5) * width)
                heights.append(r["gb_per_s"])
                fractions.append(None if r["impl"].endswith("copy") else r["fraction_of_copy"])
        impl = label.split(",")[0]
        many_threads = ", 1 thread" not in label and "thread" in label
        bars = ax.bar(
            xs,
            heights,
            width * 0.92,
            label=label,
            color=figures.color(impl),
            alpha=0.55 if many_threads or "twins" in label else 1.0,
        )
        for bar, fraction in zip(bars, fractions, strict=True):
            if fraction is not None:
                ax.annotate(
                    f"{fraction:.2f}",
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    fontsize=7,
                )
    ax.set_xticks(np.arange(len(d_models)), [f"d_model {d}" for d in d_models])
    ax.grid(axis="x", visible=False)
    ax.set_ylabel("GB/s (x read + y written)")
    ax.set_title(title or f"{device}, {dtype} (on the bars: fraction of the copy)")
    ax.legend(loc="upper left", fontsize=8, ncols=2)
    ax.set_ylim(0, 1.25 * max(r["gb_per_s"] for r in chosen))
    return fig
