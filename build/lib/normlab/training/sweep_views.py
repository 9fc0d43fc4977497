"""Views of chapter 9's recorded sweep: the tables its claims are read from, computed.

A record (`grid.newest_record`) holds one entry per run of the grid: its task, norm, depth,
init scale, learning rate and seed, its accuracies, its validation curve and its measurements.
`Sweep` indexes it and answers, NumPy only:

    values      one setting's value (test accuracy, weight growth, ...) over its seeds
    heatmap     a norm's mean over the seeds at every init scale and learning rate: the
                fixed-rate view, where a setting's rate is the grid's, not the network's
    best        each network's learning rate, chosen on the validation accuracy (mean over
                the seeds) as a practitioner would, and its test accuracy at that rate
    steps       the steps each seed took to reach a validation accuracy (`val_curve`)
    outcome     what a setting's runs did by the last step: trained, still improving (slow),
                stalled below the target, at chance, or diverged

A *setting* is (task, norm, depth, init scale, learning rate); a *network* is the same
without the learning rate, which `best` chooses. The validation records choose, the test
records report (the split of `data.classification_task`), so a choice is never made on the
numbers it is judged by.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from . import grid

CLASSES = {"spirals": 3, "digits": 10}  # data.classification_task's labels
TARGET = 0.9  # a validation accuracy that counts as trained, on either task
CHANCE_MARGIN = 0.1  # within this of 1 / classes at the end: at chance
WINDOW = 5  # evaluations averaged at the end of a curve (5 x 20 = the last 100 steps)
RISING = 0.02  # a mean validation curve still rising by this over its last window: slow
OUTCOMES = ("trains", "slow", "stalled", "chance", "diverged")


def chance(task: str) -> float:
    """The accuracy of a blind guess: one over the number of classes."""
    return 1.0 / CLASSES[task]


@dataclass(frozen=True)
class Best:
    """A network at the learning rate its validation accuracy chose."""

    lr: float
    val: float  # mean validation accuracy over the seeds at lr
    test: np.ndarray  # (seeds,) test accuracy of each seed at lr


class Sweep:
    """A recorded sweep, indexed by setting; every view reads the runs as recorded."""

    def __init__(self, record: dict):
        self.record = record
        self.settings = record["settings"]
        self.rates = tuple(self.settings["learning_rates"])
        self._runs: dict[tuple, list[dict]] = {}
        self._best: dict[tuple, Best] = {}  # each computed once: a page asks many times
        self._outcomes: dict[tuple, str] = {}
        for run in record["runs"]:
            key = (run["task"], run["norm"], run["depth"], run["init_scale"], run["lr"])
            self._runs.setdefault(key, []).append(run)
        for runs in self._runs.values():
            runs.sort(key=lambda run: run["seed"])

    def scales(self, task: str, norm: str) -> tuple[float, ...]:
        """The init scales `norm` ran at on `task` (a control runs at CONTROL_SCALE only)."""
        found = {key[3] for key in self._runs if key[:2] == (task, norm)}
        return tuple(sorted(found))

    def runs(self, task, norm, depth, scale, lr) -> list[dict]:
        """The setting's runs, by seed (KeyError naming the setting if the record has none)."""
        try:
            return self._runs[task, norm, depth, scale, lr]
        except KeyError:
            raise KeyError(f"the sweep has no runs of {(task, norm, depth, scale, lr)}") from None

    def values(self, task, norm, depth, scale, lr, value="test_accuracy") -> np.ndarray:
        """(seeds,) `value` of each run of the setting."""
        return np.array([run[value] for run in self.runs(task, norm, depth, scale, lr)], float)

    def heatmap(self, task, norm, depth, value="test_accuracy") -> np.ndarray:
        """(scales, rates) mean of `value` over the seeds: every setting at its fixed rate."""
        return np.array(
            [
                [self.values(task, norm, depth, s, lr, value).mean() for lr in self.rates]
                for s in self.scales(task, norm)
            ]
        )

    def best(self, task, norm, depth, scale) -> Best:
        """The rate with the highest mean validation accuracy (the smaller on a tie)."""
        key = (task, norm, depth, scale)
        if key not in self._best:
            val = [self.values(*key, lr, "val_accuracy").mean() for lr in self.rates]
            i = int(np.argmax(val))  # the first maximum: rates are recorded smallest first
            self._best[key] = Best(self.rates[i], float(val[i]), self.values(*key, self.rates[i]))
        return self._best[key]

    def steps(self, task, norm, depth, scale, lr, target=TARGET) -> np.ndarray:
        """(seeds,) the first evaluated step at `target` validation accuracy (inf: never)."""
        return np.array(
            [steps_to(run, target) for run in self.runs(task, norm, depth, scale, lr)], float
        )

    def outcome(self, task, norm, depth, scale, lr) -> str:
        """What the setting's runs did by the last step, one of OUTCOMES (`outcome_of`)."""
        key = (task, norm, depth, scale, lr)
        if key not in self._outcomes:
            self._outcomes[key] = outcome_of(self.runs(*key), chance(task))
        return self._outcomes[key]


def steps_to(run: dict, target: float = TARGET) -> float:
    """The first step whose recorded validation accuracy is at least `target` (inf: never)."""
    curve = np.asarray(run["val_curve"])  # steps 0, eval_every, 2 eval_every, ..., steps
    hit = np.flatnonzero(curve >= target)
    return float(hit[0] * run["eval_every"]) if hit.size else math.inf


def outcome_of(runs: list[dict], chance_level: float) -> str:
    """One setting's runs, read from the mean of their validation curves at the end.

    diverged  a run's final loss is not finite (NaN or inf), any seed's
    trains    the mean validation accuracy of the last evaluation is at least TARGET
    chance    below it, and the last WINDOW evaluations are within CHANCE_MARGIN of chance
    slow      still rising: the last WINDOW evaluations are above the WINDOW before them
              by at least RISING, so more steps would likely have taken it further
    stalled   otherwise: off chance, below the target, and not rising at the end (the
              fixed budget of steps cannot tell whether it would leave the plateau later)
    """
    if any(not math.isfinite(run["final_loss"]) for run in runs):
        return "diverged"
    curve = np.mean([run["val_curve"] for run in runs], axis=0)  # (evaluations,)
    if curve[-1] >= TARGET:
        return "trains"
    end, before = curve[-WINDOW:].mean(), curve[-2 * WINDOW : -WINDOW].mean()
    if end < chance_level + CHANCE_MARGIN:
        return "chance"
    return "slow" if end - before >= RISING else "stalled"


def complete(record: dict) -> list[str]:
    """What keeps `record` from being its settings' whole grid: each missing or repeated run.

    The grid is `grid.configs` of the record's own settings; an empty list: complete.
    """
    settings = record["settings"]
    problems = []
    for task in settings["tasks"]:
        want = grid.configs(
            (task,),
            settings["norms"],
            settings["depths"],
            settings["learning_rates"],
            settings["seeds"],
            settings["init_scales"][task],
        )
        have = [grid.config_of(run) for run in record["runs"] if run["task"] == task]
        problems += [f"missing: {c}" for c in sorted(set(want) - set(have), key=str)]
        problems += [f"not in the grid: {c}" for c in sorted(set(have) - set(want), key=str)]
        repeated = [c for c, n in Counter(have).items() if n > 1]
        problems += [f"repeated: {c}" for c in sorted(repeated, key=str)]
    return problems
