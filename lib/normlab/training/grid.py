"""The training chapter's recorded sweep: task, norm, depth, initialisation and learning rate.

Does a norm make training better, or does it make a bad initialisation (or learning rate)
harmless? One network at one learning rate cannot tell: the answer depends on where the
weights start and on how fast they move. This grid trains the chapter's network
(`train_classifier`: batch 64, Adam, 600 steps) at

    task        the spirals (2 inputs, 3 classes) and the UCI digits (64 inputs, 10 classes)
    init_scale  0.25, 0.5, 1, 2 and 4 times Kaiming's initialisation for tanh (He et al.,
                2015, arXiv:1502.01852, with torch's tanh gain 5/3) on the spirals; 0.25, 1
                and 4 on the digits
    depth       6 and 20 hidden layers
    lr          1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2 and 1e-1 (Adam): 1e-4 to 1e-2
                first; 15 of the 68 networks chose an edge of those two decades, so the grid
                went a step past each edge for every network (issue 44), and once more below,
                where two batch-norm networks still chose 3e-5: each network's best rate is
                inside the grid, not at its edge
    norm        none, batch-norm, LayerNorm, RMSNorm; centre-only (LayerNorm without its
                rescaling, a control) at Kaiming's scale; and DyT (Dynamic Tanh, no statistics;
                Zhu et al., 2025, arXiv:2503.10622), the norm-free arm of chapter 13
    seed        0 to 4 (initial weights and batch order; the records are the same)

Every run follows its validation accuracy every 20 steps, so a learning rate is chosen on the
validation records and the test accuracy is reported at it, and the steps a run took to reach
a target accuracy sit beside its final one. `scripts/training_sweep.py` runs the grid once
(resumable, one process per core) and writes `results/training-sweep-<UTC date>.json`,
labelled with the machine, the versions and the commit; chapter 9 reads the newest record
(`sweep_views` makes its tables) and re-runs one of its runs at build.
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
from .mlp import CONTROLS, NORM_FREE, NORMS

TASKS = ("spirals", "digits")
SCALES = {"spirals": (0.25, 0.5, 1.0, 2.0, 4.0), "digits": (0.25, 1.0, 4.0)}
DEPTHS = (6, 20)
LEARNING_RATES = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
SEEDS = (0, 1, 2, 3, 4)
CONTROL_SCALE = 1.0  # the centre-only control runs at Kaiming's scale alone
STEPS = 600
EVAL_EVERY = 20
PREFIX = "training-sweep-"


@dataclass(frozen=True)
class Config:
    """One run of the grid: the task, the norm, the three knobs, and the seed."""

    task: str
    norm: str
    depth: int
    init_scale: float
    lr: float
    seed: int


def configs(
    tasks=TASKS,
    norms=NORMS + CONTROLS + NORM_FREE,
    depths=DEPTHS,
    learning_rates=LEARNING_RATES,
    seeds=SEEDS,
    scales=None,
) -> list[Config]:
    """Every run of the grid, task and depth outermost (the deep runs last), seed innermost.

    `scales` (None: each task's SCALES) are the init scales of every task; a control norm
    (centre-only) runs at CONTROL_SCALE only, if that is one of them.
    """
    return [
        Config(task, norm, depth, scale, lr, seed)
        for task, depth in itertools.product(tasks, depths)
        for scale, lr, norm, seed in itertools.product(
            SCALES[task] if scales is None else scales, learning_rates, norms, seeds
        )
        if norm not in CONTROLS or scale == CONTROL_SCALE
    ]


def run_config(config: Config, steps: int = STEPS, eval_every: int = EVAL_EVERY) -> dict:
    """Train one configuration; the record keeps its knobs, results and times (seconds)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    run = train_classifier(
        config.norm,
        task=config.task,
        depth=config.depth,
        init_scale=config.init_scale,
        lr=config.lr,
        seed=config.seed,
        steps=steps,
        eval_every=eval_every,
    )
    return {
        **asdict(config),
        "test_accuracy": run.test_accuracy,
        "val_accuracy": run.val_accuracy,
        # the validation accuracy at steps 0, eval_every, 2 eval_every, ..., steps
        "val_curve": [round(float(a), 4) for a in run.val_curve[:, 1]],
        "eval_every": eval_every,
        "final_loss": run.final_loss,  # NaN if the run diverged
        "initial_loss": run.initial_loss,
        # 20-step moving average (fewer in a run that short); None: never below 0.5
        "first_step_below_half": first_step_below(run.losses, 0.5, window=min(20, steps)),
        "train_loss_eval_mode": run.train_loss_eval_mode,
        "weight_growth": run.weight_growth,
        "saturated": run.saturated,
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - start_cpu,
    }


def config_of(run: dict) -> Config:
    """The Config a recorded run was made from."""
    return Config(**{name: run[name] for name in Config.__dataclass_fields__})


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
        if all(run.get(k) == v for k, v in wanted.items()):
            return run
    raise KeyError(f"the sweep record has no run {config}")


def seed_table(record: dict, value: str, **fixed) -> dict[tuple, np.ndarray]:
    """{(task, norm, depth, init_scale, lr): `value` over the seeds}, runs matching `fixed`."""
    table: dict[tuple, list] = {}
    for run in record["runs"]:
        if all(run[k] == v for k, v in fixed.items()):
            key = (run["task"], run["norm"], run["depth"], run["init_scale"], run["lr"])
            table.setdefault(key, []).append(run[value])
    return {key: np.array(values, dtype=float) for key, values in table.items()}
