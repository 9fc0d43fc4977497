"""The speed chapter's figures, in the course style: GB/s per implementation and d_model, and
the roofline (Williams, Waterman and Patterson, 2009) with LayerNorm's place on it."""

from __future__ import annotations

import numpy as np

from .. import figures
from .run import ITEMSIZE

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


# -- the roofline (Williams, Waterman and Patterson, 2009): the speed chapter's first figure ----

# LayerNorm forward, per element: the shift by one member of the record (the reference's), two
# additions into sums, the subtraction of the mean, a square, the scaling by 1/sigma, the gain and
# the bias: eight floating-point operations (the chapter counts them)
FLOPS_PER_ELEMENT = 8
# the large matmul the roofline marks at the other end: n x n by n x n, in this dtype
MATMUL_MARK = (4096, "float16")


def layer_norm_intensity(dtype: str) -> float:
    """FLOP per byte of LayerNorm's compulsory traffic: x read once, y written once."""
    return FLOPS_PER_ELEMENT / (2 * ITEMSIZE[dtype])


def matmul_intensity(n: int, dtype: str) -> float:
    """An n x n by n x n matmul: 2 n^3 FLOP over A and B read and C written once (3 n^2 values)."""
    return 2 * n / (3 * ITEMSIZE[dtype])


def _copy_bandwidth(records: list[dict], dtype: str) -> float | None:
    """The best copy GB/s among the records of one dtype (None if there is none)."""
    copies = [r["gb_per_s"] for r in records if r["dtype"] == dtype and r["impl"].endswith("copy")]
    return max(copies) if copies else None


def _measured(ax, doc: dict, device: str, name: str, intensities: np.ndarray) -> None:
    """One recorded run on the roofline: its float32 copy bandwidth as a slope, its LayerNorms."""
    records = [r for r in doc["records"] if r["device"] == device]
    d_model = min({r["d_model"] for r in records}, key=lambda d: (abs(d - 768), d))
    bandwidth = _copy_bandwidth(records, "float32")
    if bandwidth is not None:
        # the slope only, around LayerNorm: the compute roof of our runs is not measured
        near = intensities[intensities <= 8]
        ax.plot(
            near,
            bandwidth * near,
            color=figures.color(f"{device}_roof"),
            linewidth=1.4,
            label=f"{name}: copy at {bandwidth:.0f} GB/s (measured, ours; slope only)",
        )
    for dtype in sorted({r["dtype"] for r in records}):
        for r in records:
            if r["d_model"] != d_model or r["dtype"] != dtype or r["impl"].endswith("copy"):
                continue
            if r.get("threads") not in (None, 1) or "twins" in r["kernel"]:
                continue  # one point per implementation: one thread, the fused kernel
            i = layer_norm_intensity(dtype)
            ax.plot(
                i,
                r["gb_per_s"] * i,
                marker="o",
                linestyle="none",
                color=figures.color(r["impl"]),
                label=f"{series_label(r)}, {dtype}, d = {d_model} (measured, ours; "
                "at the nominal intensity)",
            )


def roofline_figure(datasheet: dict, cpu_doc: dict | None = None, gpu_doc: dict | None = None):
    """Attainable GFLOP/s against FLOP per byte, log-log, with LayerNorm's place on it.

    The roof of a GPU from its datasheet (published, cited in the data file), the copy
    bandwidth of every recorded run of ours as a slope with its LayerNorms as points, and
    the intensities of LayerNorm (float32, 16-bit) and of a large matmul marked.
    """
    fig, ax = figures.new(width=7.8, height=4.6)
    intensities = np.geomspace(1 / 16, 4096, 200)
    bandwidth = datasheet["memory_gb_per_s"]
    fp32, tensor = datasheet["fp32_tflop_per_s"] * 1e3, datasheet["fp16_tensor_tflop_per_s"] * 1e3
    ax.plot(
        intensities,
        np.minimum(bandwidth * intensities, fp32),
        color=figures.color("reference"),
        label=f"{datasheet['gpu']} roof, FP32 (datasheet, published): "
        f"{bandwidth:,} GB/s, {fp32 / 1e3:g} TFLOP/s",
    )
    ax.plot(
        intensities,
        np.minimum(bandwidth * intensities, tensor),
        color=figures.color("reference"),
        linestyle=":",
        label=f"... with FP16 tensor cores (datasheet): {tensor / 1e3:g} TFLOP/s",
    )
    if cpu_doc is not None:
        _measured(ax, cpu_doc, "cpu", "this course's CPU", intensities)
    if gpu_doc is not None:
        gpu = gpu_doc["machine"].get("gpu") or "GPU"
        _measured(ax, gpu_doc, "cuda", f"this course's {gpu}", intensities)
    marks = [
        (layer_norm_intensity("float32"), "LayerNorm, float32"),
        (layer_norm_intensity("bfloat16"), "LayerNorm, 16-bit"),
        (matmul_intensity(*MATMUL_MARK), "matmul {}³, {}".format(*MATMUL_MARK)),
    ]
    for x, text in marks:
        ax.axvline(x, color=figures.color("muted"), linewidth=1.0, zorder=0)
        ax.annotate(
            text,
            (x, 0.98),
            xycoords=("data", "axes fraction"),
            xytext=(-3, 0),
            textcoords="offset points",
            rotation=90,
            ha="right",
            va="top",
            fontsize=8,
            # a white ground, so a roof line crossing the label does not strike it through
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0},
            zorder=3,
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(intensities[0], intensities[-1])
    ax.set_ylim(0.5, tensor * 4)
    ax.set_xlabel("arithmetic intensity, FLOP per byte moved")
    ax.set_ylabel("attainable GFLOP/s")
    ax.set_title("The roofline: LayerNorm sits on the bandwidth slope")
    ax.legend(loc="lower right", fontsize=7)
    return fig
