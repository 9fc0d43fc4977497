"""Run chapter 9's sweep once and record it: task x norm x depth x init scale x lr x seed.

    nice .venv/bin/python scripts/training_sweep.py              # the whole grid, every core
    .venv/bin/python scripts/training_sweep.py --tasks digits --depths 6 --seeds 0   # a part

The grid is `normlab.training.grid` (about 1,700 runs of 600 steps; about 80 CPU minutes),
on the CPU, one torch thread per process (tiny tensors; the same thread count as the chapter,
so a re-run at build gives the same bits on the same machine), `--jobs` processes side by side.
Each finished run is appended to `results/training-sweep.partial.jsonl` at once, so a sweep
that stops (Ctrl-C, a reboot) goes on where it was when started again with the same options;
the CPU time of every run is recorded with it. At the end it writes
results/training-sweep-<UTC date>.json: the machine (CPU, versions, date, load, as the
benchmark records it), the commit, the grid, the total times and one entry per run, and
removes the partial file. The chapter reads the newest record; commit it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import torch

from normlab.bench.machine import describe_machine, load_average
from normlab.training import grid
from normlab.training.mlp import CONTROLS, NORMS
from normlab.training.parallel import _worker_setup

PARTIAL = "training-sweep.partial.jsonl"


def git_commit() -> str | None:
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


def _done(partial: Path, settings: dict) -> tuple[dict, list[dict]]:
    """The header and the runs a stopped sweep with the same settings recorded already."""
    if not partial.exists():
        return {}, []
    lines = [json.loads(line) for line in partial.read_text().splitlines() if line.strip()]
    header, runs = lines[0], lines[1:]
    if header.get("settings") != settings:
        raise SystemExit(
            f"{partial} holds a sweep with other settings: finish it with those options, "
            "or delete the file to start this one"
        )
    return header, runs


def _results(configs: list, steps: int, jobs: int):
    """(config, its run record) as each run finishes: here, or in `jobs` processes."""
    if jobs == 1:
        for config in configs:
            yield config, grid.run_config(config, steps=steps)
        return
    spawn = get_context("spawn")
    with ProcessPoolExecutor(jobs, mp_context=spawn, initializer=_worker_setup) as pool:
        futures = {pool.submit(grid.run_config, c, steps=steps): c for c in configs}
        for future in as_completed(futures):
            yield futures[future], future.result()


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(grid.TASKS), choices=grid.TASKS)
    parser.add_argument("--norms", nargs="+", default=list(NORMS + CONTROLS))
    parser.add_argument("--depths", nargs="+", type=int, default=list(grid.DEPTHS))
    parser.add_argument("--scales", nargs="+", type=float, help="every task's (default: SCALES)")
    parser.add_argument("--lrs", nargs="+", type=float, default=list(grid.LEARNING_RATES))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(grid.SEEDS))
    parser.add_argument("--steps", type=int, default=grid.STEPS)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).parents[1] / "results")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.jobs < 1:
        parser.error("--steps and --jobs must be at least 1")
    return args


def settings_for(args: argparse.Namespace) -> dict:
    """What the record says of the grid it ran: the options, the data, the network."""
    return {
        "tasks": args.tasks,
        "norms": args.norms,
        "depths": args.depths,
        "init_scales": {task: args.scales or list(grid.SCALES[task]) for task in args.tasks},
        "control_scale": grid.CONTROL_SCALE,
        "learning_rates": args.lrs,
        "seeds": args.seeds,
        "steps": args.steps,
        "eval_every": grid.EVAL_EVERY,
        "data": {
            "spirals": "3 arms of 200 points, 1.25 turns: train data seed 0, test 1, validation 2",
            "digits": "UCI optical digits (CC BY 4.0), 1,797 images shuffled with seed 0: "
            "1,077 train, 360 validation, 360 test",
        },
        "network": "width 64, Linear -> norm -> tanh, read-out at torch's default init",
        "optimizer": "Adam, batch 64",
        "init_scale_means": "std = init_scale * (5/3) / sqrt(fan_in), zero bias",
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    settings = settings_for(args)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    partial = args.out_dir / PARTIAL
    header, runs = _done(partial, settings)
    if not header:
        machine = describe_machine(torch)
        machine["commit"] = git_commit()
        machine["torch_threads_used"] = 1
        header = {"settings": settings, "machine": machine}
        partial.write_text(json.dumps(header) + "\n")
    todo = grid.configs(args.tasks, args.norms, args.depths, args.lrs, args.seeds, args.scales)
    have = {grid.config_of(run) for run in runs}
    left = [config for config in todo if config not in have]
    print(f"{len(todo)} runs, {len(have)} recorded before, {len(left)} to go", file=sys.stderr)

    start = time.perf_counter()
    with partial.open("a") as out:
        for i, (config, run) in enumerate(_results(left, args.steps, args.jobs), 1):
            out.write(json.dumps(run) + "\n")
            out.flush()
            runs.append(run)
            print(
                f"[{i}/{len(left)}] {config}: val {run['val_accuracy']:.3f}, "
                f"test {run['test_accuracy']:.3f} ({run['cpu_seconds']:.1f} CPU s)",
                file=sys.stderr,
                flush=True,
            )

    order = {config: i for i, config in enumerate(todo)}
    runs.sort(key=lambda run: order[grid.config_of(run)])
    machine = header["machine"]
    machine["load_average_end"] = load_average()
    record = {
        "machine": machine,
        "settings": settings,
        "seconds_this_session": time.perf_counter() - start,  # wall clock, other work included
        "cpu_seconds_total": sum(run["cpu_seconds"] for run in runs),  # the runs alone
        "runs": runs,
    }
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = args.out_dir / f"{grid.PREFIX}{stamp}.json"
    path.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    partial.unlink()
    print(
        f"{len(runs)} runs, {record['cpu_seconds_total'] / 60:.0f} CPU min: {path}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
