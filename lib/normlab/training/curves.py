"""Reading a loss curve: smooth it, and find the first step where it gets below a level.

A mini-batch loss is noisy (each step sees a different batch), so both work on the moving
average over `window` steps. NumPy only; the training chapter reads its runs with these.
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
