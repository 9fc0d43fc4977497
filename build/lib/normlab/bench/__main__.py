"""`python -m normlab.bench`: time LayerNorm against the copy ceiling; see --help."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from .report import format_summary, format_table, summarize, write_files
from .run import GPU_SUITE_D_MODELS, BenchConfig, run_bench


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m normlab.bench",
        description="Time LayerNorm forward (NumPy and torch, CPU and GPU) against the "
        "bandwidth of a plain copy. Prints a table; writes JSON and CSV.",
    )
    p.add_argument("--d-model", type=int, nargs="+", help="feature sizes (default 64 768 4096)")
    p.add_argument("--mib", type=float, help="MiB of input per CPU case (default 128)")
    p.add_argument("--rows", type=int, help="rows per case, instead of --mib")
    p.add_argument("--repeats", type=int, help="timed calls per impl on the CPU (default 15)")
    p.add_argument("--warmup", type=int, help="untimed calls per impl first (default 2)")
    p.add_argument("--dtype", nargs="+", help="CPU dtypes (default float32)")
    p.add_argument("--threads", type=int, nargs="+", help="torch_cpu thread counts")
    p.add_argument("--impls", nargs="+", help="only these impl names")
    p.add_argument("--device", choices=["cpu", "cuda", "all"], help="default: all present")
    p.add_argument("--cuda-mib", type=float, help="MiB of input per GPU case (default 1024)")
    p.add_argument("--cuda-repeats", type=int, help="timed calls per impl on the GPU (50)")
    p.add_argument(
        "--gpu-suite",
        action="store_true",
        help=f"the recorded GPU run: CPU and GPU, d_model {' '.join(map(str, GPU_SUITE_D_MODELS))}",
    )
    p.add_argument(
        "--fresh-memory",
        action="store_true",
        help="let malloc give freed memory back (numpy_naive then page-faults on every call)",
    )
    p.add_argument("--out-dir", default="results", help="where the JSON and CSV go (results/)")
    p.add_argument("--no-files", action="store_true", help="write no files")
    p.add_argument("--json", action="store_true", help="print the records as JSON on stdout")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p.parse_args(argv)


def config_from(args: argparse.Namespace) -> BenchConfig:
    cfg = BenchConfig(progress=not args.no_progress, keep_freed_memory=not args.fresh_memory)
    if args.gpu_suite:
        cfg.d_models = GPU_SUITE_D_MODELS
        cfg.devices = ("cpu", "cuda")
    given = {
        "d_models": args.d_model,
        "mib": args.mib,
        "rows": args.rows,
        "repeats": args.repeats,
        "warmup": args.warmup,
        "cpu_dtypes": args.dtype,
        "torch_threads": args.threads,
        "impls": args.impls,
        "cuda_mib": args.cuda_mib,
        "cuda_repeats": args.cuda_repeats,
    }
    for key, value in given.items():
        if value is not None:
            setattr(cfg, key, tuple(value) if isinstance(value, list) else value)
    if args.device == "cpu":
        cfg.devices = ("cpu",)
    elif args.device == "cuda":
        cfg.devices = ("cuda",)
    elif args.device == "all":
        cfg.devices = ("cpu", "cuda")
    return cfg


def main(argv=None) -> int:
    args = parse_args(argv)
    result = run_bench(config_from(args))
    summary = summarize(result.records)
    document = asdict(result) | {"summary": summary}
    text = sys.stderr if args.json else sys.stdout
    print(format_table(result.records), file=text)
    print(format_summary(summary), file=text)
    load = (result.machine["load_average_start"], result.machine["load_average_end"])
    print(f"machine: {result.machine['cpu_model']}; load average {load[0]} -> {load[1]}", file=text)
    if not args.no_files:
        for path in write_files(document, Path(args.out_dir)):
            print(f"wrote {path}", file=text)
    if args.json:
        json.dump(result.records, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
