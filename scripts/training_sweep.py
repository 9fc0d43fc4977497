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

    nice .venv/bin/python scripts/training_sweep.py --reuse results/training-sweep-<date>.json

takes the runs of an earlier record that belong to this grid as they were recorded, instead of
making them again (a grown grid: another arm, more rates). It first re-makes `--check` of them
here and stops unless each gives its recorded values bit for bit. The record says which record
made each run (`made_in`, its file name) and what made it (`machines`: the machine and commit
of every record named there), and which reused runs were re-made (`reuse_checks`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from multiprocessing import get_context
from pathlib import Path

import torch

from normlab.bench.machine import describe_machine, load_average
from normlab.training import grid
from normlab.training.mlp import CONTROLS, NORM_FREE, NORMS
from normlab.training.parallel import _worker_setup

PARTIAL = "training-sweep.partial.jsonl"
TIMES = ("seconds", "cpu_seconds", "made_in")  # what a run made again may change
# the settings a reused run must share with this sweep: all but the grid's axes
PROTOCOL = ("control_scale", "steps", "eval_every", "data", "network", "optimizer")


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


def reusable(path: Path, settings: dict) -> tuple[dict, dict]:
    """({config: run} of an earlier record, {record name: machine} of what made its runs).

    Refused (SystemExit) unless the record ran the same protocol (PROTOCOL). A run made in that
    record is marked `made_in` its file name; a run it reused keeps its own mark.
    """
    record = json.loads(path.read_text())
    differ = [k for k in PROTOCOL if record["settings"].get(k) != settings[k]]
    if differ:
        raise SystemExit(f"{path} ran another protocol ({', '.join(differ)}): cannot reuse it")
    machines = record.get("machines", {path.name: record["machine"]})
    runs = {grid.config_of(run): {"made_in": path.name, **run} for run in record["runs"]}
    return runs, machines


def check_reused(reused: dict, count: int, steps: int) -> list[dict]:
    """Re-make `count` reused runs here; stop unless each is as recorded.

    The runs are drawn at random (seed 0, so the same ones each time) from each record that
    made some of them in turn, so a run of every earlier session is made again.
    """
    by_record: dict[str, list] = {}
    for config in sorted(reused, key=str):
        by_record.setdefault(reused[config]["made_in"], []).append(config)
    draw, records = random.Random(0), sorted(by_record)
    picked = []
    for i in range(min(count, len(reused))):
        left = [c for c in by_record[records[i % len(records)]] if c not in picked]
        picked += [draw.choice(left)] if left else []
    checks = []
    for config in picked:
        old, new = reused[config], grid.run_config(config, steps=steps)
        differ = [k for k in old if k not in TIMES and json.dumps(old[k]) != json.dumps(new[k])]
        if differ:
            raise SystemExit(
                f"{config} made here differs from {old['made_in']} in {differ}: not reused"
            )
        checks.append({**asdict(config), "made_in": old["made_in"], "same": True})
        print(f"checked {config}: as recorded", file=sys.stderr, flush=True)
    return checks


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
    parser.add_argument("--norms", nargs="+", default=list(NORMS + CONTROLS + NORM_FREE))
    parser.add_argument("--depths", nargs="+", type=int, default=list(grid.DEPTHS))
    parser.add_argument("--scales", nargs="+", type=float, help="every task's (default: SCALES)")
    parser.add_argument("--lrs", nargs="+", type=float, default=list(grid.LEARNING_RATES))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(grid.SEEDS))
    parser.add_argument("--steps", type=int, default=grid.STEPS)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).parents[1] / "results")
    parser.add_argument("--reuse", nargs="+", type=Path, default=[], help="earlier records")
    parser.add_argument("--check", type=int, default=6, help="reused runs re-made first")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.jobs < 1 or args.check < 0:
        parser.error("--steps and --jobs must be at least 1, --check at least 0")
    args.lrs = sorted(args.lrs)  # smallest first: sweep_views breaks a tie towards it
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
    todo = grid.configs(args.tasks, args.norms, args.depths, args.lrs, args.seeds, args.scales)
    torch.set_num_threads(1)  # as in every worker: the reuse checks run here
    wanted, reused, machines = set(todo), {}, {}
    for path in args.reuse:
        runs_there, made_by = reusable(path, settings)
        reused.update({c: run for c, run in runs_there.items() if c in wanted})
        machines.update(made_by)
    header, runs = _done(partial, settings)
    if header and header.get("reused_from", []) != [p.name for p in args.reuse]:
        raise SystemExit(f"{partial} reused other records: {header.get('reused_from')}")
    if not header:
        machine = describe_machine(torch)
        machine["commit"] = git_commit()
        machine["torch_threads_used"] = 1
        header = {
            "settings": settings,
            "machine": machine,
            "reused_from": [p.name for p in args.reuse],
            "reuse_checks": check_reused(reused, args.check, args.steps),
        }
        partial.write_text(json.dumps(header) + "\n")
    have = {grid.config_of(run) for run in runs} | set(reused)
    left = [config for config in todo if config not in have]
    print(
        f"{len(todo)} runs, {len(reused)} reused, {len(have) - len(reused)} recorded before, "
        f"{len(left)} to go",
        file=sys.stderr,
    )

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

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = args.out_dir / f"{grid.PREFIX}{stamp}.json"
    made_here = sum(run["cpu_seconds"] for run in runs)
    runs = [{**run, "made_in": path.name} for run in runs] + list(reused.values())
    order = {config: i for i, config in enumerate(todo)}
    runs.sort(key=lambda run: order[grid.config_of(run)])
    machine = header["machine"]
    machine["load_average_end"] = load_average()
    machines = {**machines, path.name: machine}
    record = {
        "machine": machine,
        "settings": settings,
        "seconds_this_session": time.perf_counter() - start,  # wall clock, other work included
        "cpu_seconds_total": sum(run["cpu_seconds"] for run in runs),  # the runs alone
        "cpu_seconds_made_here": made_here,  # the runs this record made, not those it reused
        "machines": {name: machines[name] for name in sorted({r["made_in"] for r in runs})},
        "reuse_checks": header.get("reuse_checks", []),
        "runs": runs,
    }
    path.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    partial.unlink()
    print(
        f"{len(runs)} runs, {record['cpu_seconds_total'] / 60:.0f} CPU min: {path}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
