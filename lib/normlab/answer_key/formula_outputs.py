"""What every member of the family (`normlab.grading.formulas`) computes, and the statistics
judges compare with: the oracle's `formula_outputs(x, eps)` and `statistics(x)`. One member is
the correct LayerNorm, batch-norm or RMSNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450), so
this stays with the graders.
"""

from __future__ import annotations

import warnings
from functools import cache, partial

import numpy as np

from ..grading.formulas import Formula, axis_subsets, members


def moments(x, axes, center: bool, divisor: str, detach=()):
    """x centred (or not) over `axes`, and its second moment with the divisor: x a NumPy
    array, or a torch tensor whose mean or moment `detach` ("mean", "var") cuts from the graph."""
    n = int(np.prod([x.shape[a] for a in axes]))
    if center:
        mean = x.mean(axis=axes, keepdims=True)
        x = x - (mean.detach() if "mean" in detach else mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        m2 = (x * x).sum(axis=axes, keepdims=True) / {"n": n, "n-1": n - 1, "1": 1}[divisor]
    return x, (m2.detach() if "var" in detach else m2)


def scale(m2, mode: str, eps: float, fixed: float, sqrt=np.sqrt):
    """What a member divides by, from the second moment m2 (`sqrt`: NumPy's, or torch's)."""
    if mode == "outside":
        return sqrt(m2) + eps
    return sqrt(m2 + {"inside": eps, "none": 0.0, "fixed": fixed}[mode])


def all_outputs(x, eps: float) -> dict[Formula, np.ndarray]:
    """Every variant's output on x (float64, gamma = 1, beta = 0), in a fixed order: judges
    pick the first of equally close ones."""
    x = np.asarray(x, dtype=np.float64)
    moment = cache(partial(moments, x))  # once per (axes, center, divisor)
    outputs = {}
    for v in members(x.ndim):
        xc, m2 = moment(v.axes, v.center, v.divisor)
        with np.errstate(divide="ignore", invalid="ignore"):
            outputs[v] = xc / scale(m2, v.eps_mode, eps, v.fixed_eps)
    return outputs


def statistics(x) -> dict[tuple[tuple[int, ...], int], tuple[np.ndarray, np.ndarray]]:
    """(axes, ddof) -> (mean, variance) of x over those axes (float64), for every non-empty set
    of axes and ddof 0 (the population variance) and 1 (the sample variance)."""
    x = np.asarray(x, dtype=np.float64)
    with warnings.catch_warnings():  # the sample variance of one number: NaN, not a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        return {
            (axes, ddof): (x.mean(axis=axes), x.var(axis=axes, ddof=ddof))
            for axes in axis_subsets(x.ndim)
            for ddof in (0, 1)
        }
