"""Run chapter 9's sweep once and record it: init scale x depth x learning rate x norm x seed.

    nice .venv/bin/python scripts/training_sweep.py            # the whole grid (360 runs)
    .venv/bin/python scripts/training_sweep.py --depths 6 --seeds 0   # a part, for a try

The grid is `normlab.training.grid` (5 scales around Kaiming's, depths 6 and 20, learning rates
3e-4, 1e-3 and 3e-3, the four norms, seeds 0 to 2, 600 steps each), on the CPU, one torch thread
(tiny tensors; the same thread count as the chapter, so a re-run at build gives the same bits on
the same machine). It writes results/training-sweep-<UTC date>.json: the machine (CPU, versions,
date, load, as the benchmark records it), the grid, the total time and one entry per run. The
chapter reads the newest file; commit it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import time
from pathlib import Path

import torch

from normlab.bench.machine import describe_machine, load_average
from normlab.training import grid
from normlab.training.mlp import NORMS


def _commit() -> str | None:
    """The git commit of the code that ran, with "-dirty" if the work tree had changes."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--norms", nargs="+", default=list(NORMS), choices=NORMS)
    parser.add_argument("--depths", nargs="+", type=int, default=list(grid.DEPTHS))
    parser.add_argument("--scales", nargs="+", type=float, default=list(grid.SCALES))
    parser.add_argument("--lrs", nargs="+", type=float, default=list(grid.LEARNING_RATES))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(grid.SEEDS))
    parser.add_argument("--steps", type=int, default=grid.STEPS)
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).parents[1] / "results")
    args = parser.parse_args(argv)

    machine = describe_machine(torch)
    machine["commit"] = _commit()
    torch.set_num_threads(1)
    machine["torch_threads_used"] = torch.get_num_threads()
    todo = grid.configs(args.norms, args.depths, args.scales, args.lrs, args.seeds)
    start, start_cpu = time.perf_counter(), time.process_time()
    runs = []
    for i, config in enumerate(todo, 1):
        runs.append(grid.run_config(config, steps=args.steps))
        print(
            f"[{i}/{len(todo)}] {config}: test accuracy {runs[-1]['test_accuracy']:.3f}"
            f" ({runs[-1]['seconds']:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
    machine["load_average_end"] = load_average()
    record = {
        "machine": machine,
        "settings": {
            "norms": args.norms,
            "depths": args.depths,
            "init_scales": args.scales,
            "learning_rates": args.lrs,
            "seeds": args.seeds,
            "steps": args.steps,
            "task": "spirals, 3 arms of 200 points, 1.25 turns, data seed 0 (test: seed 1)",
            "network": "width 64, Linear -> norm -> tanh, read-out at torch's default init",
            "optimizer": "Adam, batch 64",
            "init_scale_means": "std = init_scale * (5/3) / sqrt(fan_in), zero bias",
        },
        "seconds_total": time.perf_counter() - start,  # wall clock, other work included
        "cpu_seconds_total": time.process_time() - start_cpu,  # this process alone
        "runs": runs,
    }
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    path = args.out_dir / f"{grid.PREFIX}{stamp}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{len(runs)} runs in {record['seconds_total']:.0f} s: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
