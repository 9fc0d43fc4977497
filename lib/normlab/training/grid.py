"""The training chapter's recorded sweep: initialisation scale, depth and learning rate, per norm.

Does a norm make training better, or does it make a bad initialisation harmless? One network on
one task cannot tell: the answer depends on where the weights start. This grid trains the
chapter's network (`train_classifier`: spirals, batch 64, Adam, 600 steps) at

    init_scale  0.25, 0.5, 1, 2 and 4 times Kaiming's initialisation for tanh (He et al., 2015,
                arXiv:1502.01852), around the "careful" choice 1
    depth       6 and 20 hidden layers
    lr          3e-4, 1e-3 and 3e-3 (Adam)
    norm        none, batch-norm, LayerNorm, RMSNorm
    seed        0, 1 and 2 (initial weights and batch order; the points are the same)

360 runs, too many for a page build on two cores, so `scripts/training_sweep.py` runs them once
and writes `results/training-sweep-<UTC date>.json`, labelled with the machine, the versions and
the date as the benchmark's results are; the chapter plots the newest record and re-runs a few
of its configurations to check that they still agree.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .classifier import train_classifier
from .curves import first_step_below
from .mlp import NORMS

SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)
DEPTHS = (6, 20)
LEARNING_RATES = (3e-4, 1e-3, 3e-3)
SEEDS = (0, 1, 2)
STEPS = 600
PREFIX = "training-sweep-"


@dataclass(frozen=True)
class Config:
    """One run of the grid: the norm and the three knobs, and the seed."""

    norm: str
    depth: int
    init_scale: float
    lr: float
    seed: int


def configs(
    norms=NORMS, depths=DEPTHS, scales=SCALES, learning_rates=LEARNING_RATES, seeds=SEEDS
) -> list[Config]:
    """Every combination, depth outermost (the deep runs last), seed innermost."""
    return [
        Config(norm, depth, scale, lr, seed)
        for depth, scale, lr, norm, seed in itertools.product(
            depths, scales, learning_rates, norms, seeds
        )
    ]


def run_config(config: Config, steps: int = STEPS) -> dict:
    """Train one configuration; the record keeps its knobs, results and time (seconds)."""
    start = time.perf_counter()
    run = train_classifier(
        config.norm,
        depth=config.depth,
        init_scale=config.init_scale,
        lr=config.lr,
        seed=config.seed,
        steps=steps,
    )
    return {
        **asdict(config),
        "test_accuracy": run.test_accuracy,
        "final_loss": run.final_loss,  # NaN if the run diverged
        "initial_loss": run.initial_loss,
        # 20-step moving average (fewer in a run that short); None: never below 0.5
        "first_step_below_half": first_step_below(run.losses, 0.5, window=min(20, steps)),
        "train_loss_eval_mode": run.train_loss_eval_mode,
        "seconds": time.perf_counter() - start,
    }


def newest_record(results_dir) -> dict:
    """The newest `training-sweep-*.json` in `results_dir` (names sort by their UTC date).

    The record as written, plus "path": the file it was read from.
    """
    found = sorted(Path(results_dir).glob(f"{PREFIX}*.json"))
    if not found:
        raise FileNotFoundError(
            f"no {PREFIX}*.json in {results_dir}: run scripts/training_sweep.py to record one"
        )
    return {**json.loads(found[-1].read_text()), "path": str(found[-1])}


def find_run(record: dict, config: Config) -> dict:
    """The recorded run of `config` (KeyError naming it if the record has none)."""
    wanted = asdict(config)
    for run in record["runs"]:
        if all(run[k] == v for k, v in wanted.items()):
            return run
    raise KeyError(f"the sweep record has no run {config}")


def seed_table(record: dict, value: str, **fixed) -> dict[tuple, np.ndarray]:
    """{(norm, depth, init_scale, lr): array of `value` over the seeds}, runs matching `fixed`."""
    table: dict[tuple, list] = {}
    for run in record["runs"]:
        if all(run[k] == v for k, v in fixed.items()):
            key = (run["norm"], run["depth"], run["init_scale"], run["lr"])
            table.setdefault(key, []).append(run[value])
    return {key: np.array(values) for key, values in table.items()}
