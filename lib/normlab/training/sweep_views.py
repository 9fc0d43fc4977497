"""Views of chapter 9's recorded sweep: the tables its claims are read from, computed.

A record (`grid.newest_record`) holds one entry per run of the grid: its task, norm, depth,
init scale, learning rate and seed, its accuracies, its validation curve and its measurements.
`Sweep` indexes it and answers, NumPy only:

    values      one setting's value (test accuracy, weight growth, ...) over its seeds
    heatmap     a norm's mean over the seeds at every init scale and at the grid's rates (those
                every network ran): the fixed-rate view, the grid's rate, not the network's
    best        each network's learning rate, chosen among the rates it ran on the validation
                accuracy (mean over the seeds) as a practitioner would, and its test accuracy
    bracketed   whether that rate has a rate the network ran on each side of it: if not, a
                rate beyond the edge might have done better
    paired      two networks compared seed by seed (the same seed gives every norm the same
                initial weights and batches): the differences and a paired t-test
    steps       the steps each seed took to reach a validation accuracy (`val_curve`)
    outcome     what a setting's runs did by the last step: trained, still improving (slow),
                stalled below the target, at chance, or diverged; `verdict` reads it against
                the task: trains, trained worse, or failed (at chance or diverged)
    along_ratio a network's outcomes at the grid's rates, ordered by learning rate over init
                scale (Adam's step relative to the weights, behind a norm); `band` finds the
                one unbroken run of that ratio that trains, if there is one

A *setting* is (task, norm, depth, init scale, learning rate); a *network* is the same
without the learning rate, which `best` chooses. The validation records choose, the test
records report (the split of `data.classification_task`), so a choice is never made on the
numbers it is judged by. A record may run some networks at rates beyond the grid (its
settings' `learning_rates`, which every network ran): `best` and `bracketed` read them.
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
FAILED = ("chance", "diverged")  # learned nothing the task can tell from a blind guess
VERDICTS = ("trains", "trained worse", "failed")


def chance(task: str) -> float:
    """The accuracy of a blind guess: one over the number of classes."""
    return 1.0 / CLASSES[task]


def verdict(outcome: str) -> str:
    """An outcome against the task: trains (TARGET), failed (FAILED), or trained worse.

    Trained worse: off chance by more than CHANCE_MARGIN, so it learned something, but below
    the target, still improving or stalled when the steps ran out.
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}; got {outcome!r}")
    if outcome == "trains":
        return "trains"
    return "failed" if outcome in FAILED else "trained worse"


@dataclass(frozen=True)
class Best:
    """A network at the learning rate its validation accuracy chose."""

    lr: float
    val: float  # mean validation accuracy over the seeds at lr
    test: np.ndarray  # (seeds,) test accuracy of each seed at lr


@dataclass(frozen=True)
class Paired:
    """Two networks seed by seed: b minus a, each at the rate its validation chose."""

    differences: np.ndarray  # (seeds,) test accuracy of b minus a, by seed
    t: float  # mean / (sample std / sqrt(seeds))
    p: float  # two-sided, Student's t with seeds - 1 degrees of freedom

    @property
    def mean(self) -> float:
        return float(self.differences.mean())


class Sweep:
    """A recorded sweep, indexed by setting; every view reads the runs as recorded."""

    def __init__(self, record: dict):
        self.record = record
        self.settings = record["settings"]
        self._runs: dict[tuple, list[dict]] = {}
        self._best: dict[tuple, Best] = {}  # each computed once: a page asks many times
        self._outcomes: dict[tuple, str] = {}
        for run in record["runs"]:
            key = (run["task"], run["norm"], run["depth"], run["init_scale"], run["lr"])
            self._runs.setdefault(key, []).append(run)
        for runs in self._runs.values():
            runs.sort(key=lambda run: run["seed"])
        self._rates_of: dict[tuple, tuple[float, ...]] = {}
        for key in sorted(self._runs):
            self._rates_of[key[:4]] = (*self._rates_of.get(key[:4], ()), key[4])
        # the grid's rates: those every network ran (a record may run some beyond them)
        common = set.intersection(*(set(rates) for rates in self._rates_of.values()))
        self.rates = tuple(sorted(common))

    def rates_of(self, task, norm, depth, scale) -> tuple[float, ...]:
        """The learning rates the network ran, smallest first."""
        try:
            return self._rates_of[task, norm, depth, scale]
        except KeyError:
            raise KeyError(f"the sweep has no network {(task, norm, depth, scale)}") from None

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
        """The rate it ran with the highest mean validation accuracy (the smaller on a tie)."""
        key = (task, norm, depth, scale)
        if key not in self._best:
            rates = self.rates_of(*key)
            val = [self.values(*key, lr, "val_accuracy").mean() for lr in rates]
            i = int(np.argmax(val))  # the first maximum: the rates are smallest first
            self._best[key] = Best(rates[i], float(val[i]), self.values(*key, rates[i]))
        return self._best[key]

    def bracketed(self, task, norm, depth, scale) -> bool:
        """Did the network run a rate below its chosen one and a rate above it?"""
        rates = self.rates_of(task, norm, depth, scale)
        return rates[0] < self.best(task, norm, depth, scale).lr < rates[-1]

    def paired(self, task, depth, scale, a, b) -> Paired:
        """Norm b against norm a, each at its chosen rate, seed by seed (paired_t)."""
        seeds = [
            [
                run["seed"]
                for run in self.runs(task, n, depth, scale, self.best(task, n, depth, scale).lr)
            ]
            for n in (a, b)
        ]
        if seeds[0] != seeds[1]:
            raise ValueError(f"{a} and {b} ran different seeds: {seeds[0]} and {seeds[1]}")
        differences = self.best(task, b, depth, scale).test - self.best(task, a, depth, scale).test
        return Paired(differences, *paired_t(differences))

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

    def along_ratio(self, task, norm, depth) -> list[tuple[float, str, float]]:
        """[(lr / scale, outcome, scale)] of every setting at the grid's rates, ratio ascending."""
        return sorted(
            (lr / s, self.outcome(task, norm, depth, s, lr), s)
            for s in self.scales(task, norm)
            for lr in self.rates
        )

    def worse_than_none(self, task, depth, norm) -> list[tuple]:
        """(task, depth, scale, lr) of every grid setting where the plain network trains and
        `norm` does not, at the same rate."""
        return [
            (task, depth, s, lr)
            for s in self.scales(task, "none")
            for lr in self.rates
            if self.outcome(task, "none", depth, s, lr) == "trains"
            and self.outcome(task, norm, depth, s, lr) != "trains"
        ]

    def only_batch_norm_learns(self, task, depth) -> list[tuple]:
        """(task, depth, scale, lr) of every grid setting where LayerNorm ends at chance and
        batch-norm does not (it trains, or is slow)."""
        return [
            (task, depth, s, lr)
            for s in self.scales(task, "batch_norm")
            for lr in self.rates
            if self.outcome(task, "layer_norm", depth, s, lr) == "chance"
            and self.outcome(task, "batch_norm", depth, s, lr) in ("trains", "slow")
        ]

    def most_saturated(self, settings, norms=("batch_norm", "layer_norm")) -> float:
        """The largest mean share of saturated tanh outputs of `norms` over `settings`
        ((task, depth, scale, lr) each)."""
        return max(
            float(self.values(t, n, d, s, lr, "saturated").mean())
            for t, d, s, lr in settings
            for n in norms
        )


def paired_t(differences) -> tuple[float, float]:
    """Student's paired t-test of `differences` against 0: (t, two-sided p).

    t = mean / (s / sqrt(n)), s the sample standard deviation (n - 1), with n - 1 degrees of
    freedom (Student, 1908, Biometrika 6(1)). All differences equal: t is 0 (p 1) if they are
    0, else infinite (p 0).
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size < 2:
        raise ValueError(f"need a 1-D array of at least 2 differences; got shape {d.shape}")
    spread = d.std(ddof=1)
    if spread == 0:
        t = 0.0 if d.mean() == 0 else math.copysign(math.inf, d.mean())
    else:
        t = float(d.mean() / (spread / math.sqrt(d.size)))
    return t, t_two_sided_p(t, d.size - 1)


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t with `df` (a positive integer) degrees of freedom.

    Abramowitz and Stegun (1964), 26.7.3 and 26.7.4: with theta = arctan(|t| / sqrt(df)),
    P(|T| < |t|) is a finite sum of powers of c = cos(theta), s = sin(theta):
        df even  s (1 + 1/2 c^2 + 1*3/(2*4) c^4 + ... + 1*3...(df-3)/(2*4...(df-2)) c^(df-2))
        df odd   2/pi (theta + s (c + 2/3 c^3 + ... + 2*4...(df-3)/(3*5...(df-2)) c^(df-2)))
                 (df = 1: 2 theta / pi, the Cauchy distribution)
    """
    if not (isinstance(df, int) and df >= 1):
        raise ValueError(f"df must be a positive integer; got {df!r}")
    if math.isnan(t):
        raise ValueError("t is NaN")
    theta = math.atan(abs(t) / math.sqrt(df))  # pi / 2 when t is infinite
    s, c = math.sin(theta), math.cos(theta)
    term = 1.0 if df % 2 == 0 else c
    total = term if df > 1 else 0.0
    for k in range(2 if df % 2 == 0 else 3, df - 1, 2):  # each term from the one before
        term *= (k - 1) / k * c * c
        total += term
    inside = s * total if df % 2 == 0 else 2 / math.pi * (theta + s * total)
    return max(0.0, 1.0 - inside)


def band(row: list[tuple[float, str, float]]):
    """(outcomes below, (lowest, highest ratio that trains), outcomes above) of a row of
    `Sweep.along_ratio`, or None when the settings that train are not one unbroken run of it."""
    trains = [i for i, (_, kind, _) in enumerate(row) if kind == "trains"]
    if not trains or any(row[i][1] != "trains" for i in range(trains[0], trains[-1] + 1)):
        return None
    lo, hi = trains[0], trains[-1]
    return [k for _, k, _ in row[:lo]], (row[lo][0], row[hi][0]), [k for _, k, _ in row[hi + 1 :]]


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

    The grid is `grid.configs` of the record's own settings, every network at every one of
    its `learning_rates`; a network of the grid may also run rates beyond them, each at every
    seed. An empty list: complete.
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
        networks = {_network(c) for c in want}
        beyond = {
            (_network(c), c.lr)
            for c in have
            if _network(c) in networks and c.lr not in settings["learning_rates"]
        }
        want += [
            grid.Config(*net, lr, seed) for net, lr in sorted(beyond) for seed in settings["seeds"]
        ]
        problems += [f"missing: {c}" for c in sorted(set(want) - set(have), key=str)]
        problems += [f"not in the grid: {c}" for c in sorted(set(have) - set(want), key=str)]
        repeated = [c for c, n in Counter(have).items() if n > 1]
        problems += [f"repeated: {c}" for c in sorted(repeated, key=str)]
    return problems


def _network(config: grid.Config) -> tuple:
    """(task, norm, depth, init_scale): the network a run belongs to."""
    return (config.task, config.norm, config.depth, config.init_scale)
