"""Published GPU figures for LayerNorm: cited, never measured by this course.

Until `scripts/gpu_bench.sh` has recorded a GPU run in results/, the speed chapter shows
what others have published for PyTorch's LayerNorm (Ba, Kiros and Hinton, 2016,
arXiv:1607.06450) on a GPU, against that GPU's datasheet memory bandwidth. The numbers
live in `normlab/data/published_gpu_layer_norm.json`, each with its source link, date,
hardware and a quotation of where it comes from; this module reads them and never
changes them. Where a source does not say which variant of a GPU it ran on, the fraction
of bandwidth is given as a range over the variants.
"""

from __future__ import annotations

import json
from importlib import resources

DATA = "published_gpu_layer_norm.json"
LABEL = "published"  # how the book names these numbers: never "ours", never "measured"


def load() -> dict:
    """The data file: {"about", "datasheets": [...], "measurements": [...]}."""
    return json.loads(resources.files("normlab").joinpath("data", DATA).read_text("utf-8"))


def datasheet(data: dict, gpu: str) -> dict:
    """The datasheet entry of `gpu` (KeyError naming the known ones if absent)."""
    for entry in data["datasheets"]:
        if entry["gpu"] == gpu:
            return entry
    raise KeyError(f"no datasheet for {gpu!r}; have {[e['gpu'] for e in data['datasheets']]}")


def fraction_of_bandwidth(data: dict, measurement: dict) -> tuple[float, float]:
    """(lowest, highest) published GB/s over datasheet bandwidth, over the possible variants."""
    fractions = [
        measurement["gb_per_s"] / datasheet(data, gpu)["memory_gb_per_s"]
        for gpu in measurement["datasheets"]
    ]
    return min(fractions), max(fractions)


def _range(low: float, high: float) -> str:
    return f"{low:.2f}" if round(low, 2) == round(high, 2) else f"{low:.2f} to {high:.2f}"


def markdown_table(data: dict) -> str:
    """The measurements as a Markdown table, each row linked to its source and labelled."""
    lines = [
        "| source (published) | date | hardware | what | shape | dtype | GB/s "
        "| of datasheet bandwidth |",
        "|---|---|---|---|---|---|---:|---:|",
    ]
    for m in data["measurements"]:
        name = m["source"].removeprefix("https://github.com/").replace("/issues/", " #")
        low, high = fraction_of_bandwidth(data, m)
        lines.append(
            f"| [{name}]({m['source']}) ({LABEL}) | {m['date']} | {m['hardware']} | {m['what']} "
            f"| {m['shape']} | {m['dtype']} | {m['gb_per_s']:.0f} | {_range(low, high)} |"
        )
    return "\n".join(lines)
