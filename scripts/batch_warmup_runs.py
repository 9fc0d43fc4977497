"""Run the second page of chapter 9 once and record it: the batch-size and warm-up runs.

    nice .venv/bin/python scripts/batch_warmup_runs.py     # 42 runs, every core, about 5 CPU min

chapters/09_batch_placement_warmup.md reads the record and re-makes one run of each kind at
build, which must give the recorded numbers (bit for bit on the machine that recorded them).
The runs are seeded, on the CPU, one torch thread per process (`training.run_all`, the same
results as one after the other). Writes results/batch-warmup-<UTC date>.json: the machine (as
the benchmark records it), the commit, and each run's arguments and results; then point the
page's RECORD_FILE at it and commit both.
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

import torch
from training_sweep import git_commit  # scripts/ is this script's own folder

from normlab import training
from normlab.bench.machine import describe_machine

PREFIX = "batch-warmup-"
SEEDS = (0, 1, 2)

# -- the batch-size runs
BATCH_SIZES = (2, 8, 32, 128)
BATCH_STEPS = 300
BATCH_RUNS = [
    dict(norm=norm, batch_size=b, seed=s, turns=0.6, steps=BATCH_STEPS)
    for norm in ("batch_norm", "layer_norm")
    for b in BATCH_SIZES
    for s in SEEDS
]
# -- end of the batch-size runs

# -- the transformer runs
WARMUP, SEQ_STEPS = 30, 400  # long enough that every curve has flattened by the end
SEQ_RATES = (1e-3, 3e-3)  # Adam's learning rate, after the warm-up if there is one
ARMS = (("pre_ln", 0), ("post_ln", 0), ("post_ln", WARMUP))  # the claim is about post-LN
SEQ_RUNS = [
    dict(placement=p, warmup_steps=w, lr=lr, steps=SEQ_STEPS, layers=6, seed=s)
    for lr in SEQ_RATES
    for p, w in ARMS
    for s in SEEDS
]
# -- end of the transformer runs


def batch_result(run: training.ClassifierRun) -> dict:
    """What the page reads of a batch-size run."""
    return {
        "test_accuracy": run.test_accuracy,
        "train_accuracy_train_mode": run.train_accuracy_train_mode,
        "train_accuracy_eval_mode": run.train_accuracy_eval_mode,
    }


def seq_result(run: training.SequenceRun) -> dict:
    """What the page reads of a transformer run: every step's loss, the final accuracy."""
    return {"losses": [float(v) for v in run.losses], "accuracy": run.accuracy}


def main() -> int:
    torch.set_num_threads(1)
    machine = describe_machine(torch)
    machine["commit"] = git_commit()
    batch = training.run_all(training.train_classifier, dict(enumerate(BATCH_RUNS)))
    seq = training.run_all(training.train_sequence_model, dict(enumerate(SEQ_RUNS)))
    record = {
        "machine": machine,
        "batch_runs": [{"args": a, **batch_result(batch[i])} for i, a in enumerate(BATCH_RUNS)],
        "seq_runs": [{"args": a, **seq_result(seq[i])} for i, a in enumerate(SEQ_RUNS)],
    }
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = Path(__file__).parents[1] / "results" / f"{PREFIX}{stamp}.json"
    path.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    print(f"{len(BATCH_RUNS) + len(SEQ_RUNS)} runs: {path} (the page's RECORD_FILE)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
