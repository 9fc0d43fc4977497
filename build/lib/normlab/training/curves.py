"""Reading a loss curve: smooth it, find the first step where it gets below a level, and
average its tail.

A mini-batch loss is noisy (each step sees a different batch), so these work on averages over
several steps, never on one step's value. NumPy only; the training chapter reads its runs with
these.
"""

from __future__ import annotations

import numpy as np


def smooth(losses, window: int = 20) -> np.ndarray:
    """Moving average: entry i is the mean of losses[i : i + window] (len - window + 1 values)."""
    losses = np.asarray(losses, dtype=float)
    if window < 1 or window > len(losses):
        raise ValueError(f"window must be in 1..{len(losses)}; got {window}")
    return np.convolve(losses, np.ones(window) / window, mode="valid")


def first_step_below(losses, level: float, window: int = 20) -> int | None:
    """The first step whose moving-average loss is below `level`, or None if it never gets there.

    The step is counted at the end of the window: the average of steps s - window + 1 .. s.
    """
    below = np.flatnonzero(smooth(losses, window) < level)
    return int(below[0]) + window - 1 if below.size else None


def tail_mean(losses, share: int = 10) -> float:
    """Mean of the last 1/`share` of the losses (at least the last one); NaN if any of them is."""
    losses = np.asarray(losses, dtype=float)
    if share < 1 or losses.size == 0:
        raise ValueError(f"need share >= 1 and at least one loss; got {share}, {losses.size}")
    return float(losses[-max(1, len(losses) // share) :].mean())
