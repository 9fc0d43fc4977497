"""Run the bench: build each case's input, check every implementation, time, record.

A case is one (device, dtype, d_model) with `rows` records; rows are chosen so the
input alone is `mib` MiB, well past the last-level cache (32 MiB on the course's
machine), so every call streams x from memory and y back to it. LayerNorm must read
x once and write y once: bytes_moved = 2 rows d itemsize (gamma and beta, 2 d
itemsize, are left out), and GB/s = bytes_moved / seconds, comparable with a copy
of x, which moves the same bytes.
"""

from __future__ import annotations

import gc
import statistics
from dataclasses import asdict, dataclass, field

import numpy as np

from . import cuda as cuda_side
from .impls import Impl, idx_tensor, numpy_impls, to_float64, torch_cpu_impls
from .machine import describe_machine, load_average
from .timing import keep_freed_memory, time_interleaved, warm_up
from .verify import check_copy, check_layer_norm, rows_to_check

ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}
GPU_SUITE_D_MODELS = (64, 768, 1024, 4096, 8192)


@dataclass
class BenchConfig:
    """What to run. The defaults are `python -m normlab.bench`."""

    d_models: tuple[int, ...] = (64, 768, 4096)
    mib: float = 128.0  # size of x in each CPU case
    rows: int | None = None  # fixed rows for every case instead of `mib`
    cpu_dtypes: tuple[str, ...] = ("float32",)
    repeats: int = 15
    warmup: int = 2
    torch_threads: tuple[int, ...] | None = None  # None: 1 and torch's default
    devices: tuple[str, ...] | None = None  # None: cpu, and cuda when there is a GPU
    impls: tuple[str, ...] | None = None  # only these impl names (None: all)
    cuda_dtypes: tuple[str, ...] = ("float32", "float16", "bfloat16")
    cuda_mib: float = 1024.0
    cuda_repeats: int = 50
    cuda_warmup: int = 5
    eps: float = 1e-5
    seed: int = 0
    progress: bool = True
    keep_freed_memory: bool = True


@dataclass
class BenchResult:
    machine: dict
    settings: dict
    records: list[dict] = field(default_factory=list)


def rows_for(cfg: BenchConfig, d: int, dtype: str, device: str) -> int:
    if cfg.rows is not None:
        return cfg.rows
    mib = cfg.cuda_mib if device == "cuda" else cfg.mib
    return max(1, int(mib * 2**20) // (d * ITEMSIZE[dtype]))


def run_bench(cfg: BenchConfig | None = None) -> BenchResult:
    """Run every case of `cfg`; return the machine, the settings and one record per impl."""
    cfg = cfg or BenchConfig()
    import torch

    freed_memory_kept = keep_freed_memory() if cfg.keep_freed_memory else False
    all_threads = torch.get_num_threads()
    threads = list(dict.fromkeys(cfg.torch_threads or (1, all_threads)))
    devices = cfg.devices or (("cpu", "cuda") if cuda_side.cuda_available() else ("cpu",))
    if "cuda" in devices and not cuda_side.cuda_available():
        raise RuntimeError("CUDA was asked for, but torch sees no GPU")
    settings = asdict(cfg) | {
        "devices": list(devices),
        "torch_threads": threads,
        "freed_memory_kept": freed_memory_kept,
    }
    result = BenchResult(describe_machine(torch), settings)
    cases = [("cpu", dt, d) for dt in cfg.cpu_dtypes for d in cfg.d_models if "cpu" in devices]
    cases += [("cuda", dt, d) for dt in cfg.cuda_dtypes for d in cfg.d_models if "cuda" in devices]
    bar = _progress_bar(cfg.progress)
    try:
        for device, dtype, d in cases:
            rows = rows_for(cfg, d, dtype, device)
            bar.set_description(f"{device} {dtype} d={d}")
            result.records += run_case(cfg, device, dtype, rows, d, threads, bar)
            gc.collect()
            if device == "cuda":
                torch.cuda.empty_cache()
    finally:
        bar.close()
        torch.set_num_threads(all_threads)
    result.machine["load_average_end"] = load_average()
    return result


def run_case(cfg, device: str, dtype: str, rows: int, d: int, threads, bar) -> list[dict]:
    """Build, check and time every implementation on one input; return their records."""
    if device == "cpu":
        rng = np.random.default_rng(cfg.seed)
        x = rng.standard_normal((rows, d)).astype(dtype)  # (rows, d)
        gamma = (1 + 0.1 * rng.standard_normal(d)).astype(dtype)  # (d,)
        beta = (0.1 * rng.standard_normal(d)).astype(dtype)  # (d,)
        impls = numpy_impls(x, gamma, beta, cfg.eps) + torch_cpu_impls(
            x, gamma, beta, cfg.eps, threads
        )
        idx = rows_to_check(rows, cfg.seed)
        x_rows = x[idx].astype(np.float64)  # (m, d) the values every impl reads
        gamma64, beta64 = gamma.astype(np.float64), beta.astype(np.float64)
        repeats, warmup = cfg.repeats, cfg.warmup
    else:
        x, gamma, beta = cuda_side.make_inputs(rows, d, dtype, "cuda", cfg.seed)
        impls = cuda_side.torch_device_impls(x, gamma, beta, cfg.eps)
        idx = rows_to_check(rows, cfg.seed)
        x_rows = to_float64(x[idx_tensor(idx, x.device)])  # (m, d)
        gamma64, beta64 = to_float64(gamma), to_float64(beta)
        repeats, warmup = cfg.cuda_repeats, cfg.cuda_warmup
    impls = [i for i in impls if cfg.impls is None or i.impl in cfg.impls]
    if not impls:
        return []

    errors = []
    for impl in impls:  # every output is checked before the implementation is timed
        impl.prepare()
        impl.run()
        label = f"{impl.label} [{impl.kernel}] {device} {dtype} d={d}"
        if impl.is_copy:
            errors.append(check_copy(impl.output_rows(idx), x_rows, label))
        else:
            y_rows = impl.output_rows(idx)
            errors.append(check_layer_norm(y_rows, x_rows, gamma64, beta64, cfg.eps, dtype, label))
        warm_up(impl, max(0, warmup - 1))

    bar.total = (bar.total or 0) + repeats * len(impls)
    bar.refresh()
    seconds, faults = time_interleaved(impls, repeats, on_call=lambda: bar.update(1))
    records = [
        make_record(impl, device, dtype, rows, d, secs, None if faults is None else faults[i], err)
        for i, (impl, secs, err) in enumerate(zip(impls, seconds, errors, strict=True))
    ]
    copy = next((r for r in records if r["impl"] in ("numpy_copy", "torch_cuda_copy")), None)
    for r in records:
        r["fraction_of_copy"] = None if copy is None else r["gb_per_s"] / copy["gb_per_s"]
    return records


def make_record(impl: Impl, device, dtype, rows, d, seconds, faults, max_error) -> dict:
    """One result; the first seven keys are the contract (ARCHITECTURE.md)."""
    median = statistics.median(seconds)
    bytes_moved = 2 * rows * d * ITEMSIZE[dtype]  # read x once, write y once
    return {
        "impl": impl.impl,
        "device": device,
        "rows": rows,
        "d_model": d,
        "dtype": dtype,
        "seconds_median": median,
        "gb_per_s": bytes_moved / median / 1e9,
        "threads": impl.threads,
        "kernel": impl.kernel,
        "repeats": len(seconds),
        "seconds_min": min(seconds),
        "seconds_max": max(seconds),
        "bytes_moved": bytes_moved,
        "max_abs_error": max_error,
        "page_faults_per_call": None if faults is None else statistics.median(faults),
    }


def _progress_bar(enabled: bool):
    """A tqdm bar on stderr; a stand-in that does nothing when disabled or absent."""
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is None:
        enabled = False
    if enabled:
        import sys

        return tqdm(total=0, file=sys.stderr, unit="call", dynamic_ncols=True)
    return _NoBar()


class _NoBar:
    total = 0

    def set_description(self, _):
        pass

    def update(self, _=1):
        pass

    def refresh(self):
        pass

    def close(self):
        pass
