"""Results: the summary ratios, the printed table, the JSON and CSV files, loading them back.

A result file holds {"machine", "settings", "summary", "records"}; the CSV holds the
same records, with the machine and settings as `# key: value` lines on top (pandas
reads it with `comment="#"`). Files are named bench-<kind>-<UTC date and time>, kind
`cuda` when the run timed a GPU, else `cpu`; the speed chapter reads the newest of each.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

GOAL_D_MODEL = 768
COLUMNS = [
    "impl",
    "device",
    "rows",
    "d_model",
    "dtype",
    "seconds_median",
    "gb_per_s",
    "threads",
    "kernel",
    "repeats",
    "seconds_min",
    "seconds_max",
    "bytes_moved",
    "fraction_of_copy",
    "max_abs_error",
    "page_faults_per_call",
]


def find(records, **match) -> dict | None:
    """The first record whose fields equal `match` (None if there is none)."""
    return next((r for r in records if all(r.get(k) == v for k, v in match.items())), None)


def summarize(records: list[dict], d_model: int = GOAL_D_MODEL) -> dict:
    """The numbers the issue asks for, at the d_model nearest `d_model`.

    CPU float32: numpy_fast's speed relative to torch_cpu on one thread and to
    numpy_naive (ratios of median times: 2.0 means twice as fast), and each impl's
    GB/s and fraction of the copy. CUDA: for every dtype and d_model, torch's fused
    LayerNorm as a fraction of the device copy.
    """
    summary: dict = {}
    cpu = [r for r in records if r["device"] == "cpu" and r["dtype"] == "float32"]
    if cpu:
        d = min({r["d_model"] for r in cpu}, key=lambda v: (abs(v - d_model), v))
        fast = find(cpu, impl="numpy_fast", d_model=d)
        naive = find(cpu, impl="numpy_naive", d_model=d)
        torch1 = find(cpu, impl="torch_cpu", d_model=d, threads=1)
        cpu_summary = {"d_model": d}
        for name, r in (
            ("numpy_fast", fast),
            ("numpy_naive", naive),
            ("torch_cpu_1_thread", torch1),
        ):
            if r is not None:
                cpu_summary[f"{name}_gb_per_s"] = r["gb_per_s"]
                cpu_summary[f"{name}_fraction_of_copy"] = r["fraction_of_copy"]
        if fast and torch1:
            cpu_summary["numpy_fast_vs_torch_cpu_1_thread"] = (
                torch1["seconds_median"] / fast["seconds_median"]
            )
        if fast and naive:
            cpu_summary["numpy_fast_vs_numpy_naive"] = (
                naive["seconds_median"] / fast["seconds_median"]
            )
        summary["cpu_float32"] = cpu_summary
    fused = [r for r in records if r["impl"] == "torch_cuda" and r["kernel"].startswith("torch.nn")]
    if fused:
        summary["cuda_fused_fraction_of_copy"] = {
            f"{r['dtype']} d={r['d_model']}": r["fraction_of_copy"] for r in fused
        }
    return summary


def format_table(records: list[dict]) -> str:
    """A fixed-width table, one line per record."""
    head = f"{'device':6} {'dtype':8} {'d':>5} {'rows':>9}  {'impl':22} {'kernel':32}"
    head += f" {'ms':>9} {'GB/s':>8} {'x copy':>7} {'faults':>7}"
    lines = [head, "-" * len(head)]
    for r in records:
        label = r["impl"] if r["threads"] is None else f"{r['impl']} ({r['threads']} thr)"
        frac = "" if r["fraction_of_copy"] is None else f"{r['fraction_of_copy']:.2f}"
        faults = "" if r["page_faults_per_call"] is None else f"{r['page_faults_per_call']:.0f}"
        lines.append(
            f"{r['device']:6} {r['dtype']:8} {r['d_model']:>5} {r['rows']:>9}  {label:22} "
            f"{r['kernel'][:32]:32} {r['seconds_median'] * 1e3:>9.3f} {r['gb_per_s']:>8.2f} "
            f"{frac:>7} {faults:>7}"
        )
    return "\n".join(lines)


def format_summary(summary: dict) -> str:
    lines = []
    cpu = summary.get("cpu_float32")
    if cpu:
        d = cpu["d_model"]
        if "numpy_fast_vs_torch_cpu_1_thread" in cpu:
            lines.append(
                f"d_model {d}: numpy_fast is {cpu['numpy_fast_vs_torch_cpu_1_thread']:.2f}x "
                "as fast as torch_cpu on 1 thread"
            )
        if "numpy_fast_vs_numpy_naive" in cpu:
            lines.append(
                f"d_model {d}: numpy_fast is {cpu['numpy_fast_vs_numpy_naive']:.2f}x "
                "as fast as numpy_naive"
            )
        if "numpy_fast_gb_per_s" in cpu and cpu["numpy_fast_fraction_of_copy"] is not None:
            lines.append(
                f"d_model {d}: numpy_fast moves {cpu['numpy_fast_gb_per_s']:.2f} GB/s, "
                f"{cpu['numpy_fast_fraction_of_copy']:.2f} of numpy_copy"
            )
    for key, frac in summary.get("cuda_fused_fraction_of_copy", {}).items():
        if frac is not None:
            lines.append(f"cuda {key}: F.layer_norm reaches {frac:.2f} of the device copy")
    return "\n".join(lines)


def result_kind(records: list[dict]) -> str:
    return "cuda" if any(r["device"] == "cuda" for r in records) else "cpu"


def write_files(document: dict, out_dir: Path) -> tuple[Path, Path]:
    """Write bench-<kind>-<date>.json and .csv under out_dir; return both paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = document["machine"]["date_utc"].replace("-", "").replace(":", "")[:15] + "Z"
    stem = out_dir / f"bench-{result_kind(document['records'])}-{stamp}"
    json_path, csv_path = stem.with_suffix(".json"), stem.with_suffix(".csv")
    json_path.write_text(json.dumps(document, indent=1) + "\n")
    with csv_path.open("w", newline="") as f:
        for section in ("machine", "settings"):
            for key, value in document[section].items():
                f.write(f"# {section}.{key}: {json.dumps(value)}\n")
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(document["records"])
    return json_path, csv_path


def load_result(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def latest_result(results_dir: Path, kind: str) -> dict | None:
    """The newest bench-<kind>-*.json under results_dir, loaded (None if there is none)."""
    paths = sorted(Path(results_dir).glob(f"bench-{kind}-*.json"))
    if not paths:
        return None
    document = load_result(paths[-1])
    document["path"] = str(paths[-1])
    return document


def machine_label(document: dict) -> str:
    """One line naming the hardware, software and date of a result document."""
    m = document["machine"]
    caches = m.get("caches") or {}
    parts = [m.get("gpu")] if m.get("gpu") else []
    parts.append(f"{m['cpu_model']} ({m['logical_cpus']} logical CPUs")
    parts[-1] += f", L3 {caches['L3']})" if "L3" in caches else ")"
    parts.append(f"NumPy {m['numpy']}, torch {m.get('torch', '?')}")
    if m.get("cuda"):
        parts.append(f"CUDA {m['cuda']}")
    parts.append(f"{m['date_utc'][:10]}")
    if m.get("load_average_start") and m.get("load_average_end"):
        parts.append(f"load {m['load_average_start'][0]} to {m['load_average_end'][0]}")
    return "; ".join(parts)


def markdown_table(records: list[dict]) -> str:
    """The records as a Markdown table (for the book)."""
    from .plots import series_label

    lines = [
        "| device | dtype | d_model | rows | implementation | ms (median) | GB/s | of copy |",
        "|---|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in records:
        frac = "" if r["fraction_of_copy"] is None else f"{r['fraction_of_copy']:.2f}"
        lines.append(
            f"| {r['device']} | {r['dtype']} | {r['d_model']} | {r['rows']} | {series_label(r)} "
            f"| {r['seconds_median'] * 1e3:.3f} | {r['gb_per_s']:.2f} | {frac} |"
        )
    return "\n".join(lines)


def gpu_status(gpu_doc: dict | None) -> str:
    """The speed chapter's account of the GPU: our recorded run if there is one, else how to
    record it. Published figures are shown beside either, labelled as published."""
    if gpu_doc is None:
        return (
            "**No GPU run of this course has been recorded yet**, so every GPU number on this "
            "page is published by others, with its source, and labelled *published*. On a "
            "machine with a CUDA GPU, `bash scripts/gpu_bench.sh` runs the whole benchmark in "
            "one call of a few minutes and writes `results/bench-cuda-<date>.json` and `.csv`; "
            "once they are committed, this section shows that run beside the published figures."
        )
    return (
        f"**Our GPU run**, recorded by `scripts/gpu_bench.sh` on: {machine_label(gpu_doc)} "
        f"(file `results/{Path(gpu_doc['path']).name}`). On the GPU, torch's fused "
        "`F.layer_norm` is compared with the `normlab.torch_twins` version, which writes the "
        "formula as separate torch operations (each a kernel that reads and writes whole "
        "tensors, like `numpy_naive`), and with the device copy. The published figures below "
        "are other people's, on other machines, for comparison."
    )
