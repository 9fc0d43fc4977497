"""The family of normalizations a student might have written, for diagnosis.

LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450), batch-norm and RMSNorm
are one formula with four choices:

    y = (x - c) / s,   c = mean over `axes` (or 0 when not centring),
                       s = sqrt(sum over `axes` of (x - c)^2 / divisor  (+ eps))

- axes:    which axes the statistics run over (LayerNorm and RMSNorm: the last
           axis; batch-norm: every leading axis);
- center:  subtract the mean (LayerNorm, batch-norm) or not (RMSNorm);
- divisor: "n" (population variance, mean square), "n-1" (sample variance),
           "1" (sum of squares: an L2 normalization);
- eps:     "inside" the square root (the paper), "outside" (added to s), "none",
           or "fixed" (a constant that ignores the eps argument).

Each classic misconception is one wrong choice. A judge asks which members (the oracle's, on
the case's input, gamma = 1, beta = 0) the student's output matches, and one cell reads one
choice: a student who divides by d - 1 still takes the right axis, and the axis cell says so.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

CHOICES = ("axes", "center", "divisor", "eps")  # the four choices, in this order
FIXED_EPS = (1e-5, 1e-6)
MATCH_RTOL = 1e-6
MATCH_ATOL = 1e-8


@dataclass(frozen=True)
class Formula:
    """One member of the family (see the module docstring)."""

    axes: tuple[int, ...]
    center: bool
    divisor: str  # "n" | "n-1" | "1"
    eps_mode: str  # "inside" | "outside" | "none" | "fixed"
    fixed_eps: float = 0.0


def axis_subsets(ndim: int) -> list[tuple[int, ...]]:
    """Every non-empty set of axes of an ndim-array, the last axis first."""
    axes = range(ndim - 1, -1, -1)
    return [tuple(sorted(c)) for n in range(1, ndim + 1) for c in itertools.combinations(axes, n)]


def members(ndim: int) -> list[Formula]:
    """Every member of the family for an input with `ndim` axes, in a fixed order (judges pick
    the first of equally close ones)."""
    return [
        Formula(axes, center, divisor, mode, fixed)
        for axes in axis_subsets(ndim)
        for center in (True, False)
        for divisor in ("n", "n-1", "1")
        for mode in ("inside", "outside", "none", "fixed")
        for fixed in (FIXED_EPS if mode == "fixed" else (0.0,))
    ]


def same(y, z) -> bool:
    """Is the output y the variant's output z (to about 1e-6, NaN where NaN; `matching`)?"""
    return bool(matching(y, {"z": z}))


def matching(y, outputs: dict, change=None) -> list:
    """The keys of `outputs` ({Formula: output}) whose output y is, by `same`, in order, after
    `change(z)` if given (ps8: its gain and bias); one comparison with all (about 200) at once."""
    y = np.asarray(y, dtype=np.float64)
    changed = outputs if change is None else {v: change(z) for v, z in outputs.items()}
    zs = {v: np.asarray(z, dtype=np.float64) for v, z in changed.items()}
    zs = {v: z for v, z in zs.items() if z.shape == y.shape}
    if not zs:
        return []
    z = np.stack(list(zs.values()))
    with np.errstate(invalid="ignore"):
        close = np.abs(y - z) <= MATCH_ATOL + MATCH_RTOL * np.abs(z)
    found = (close | (np.isnan(y) & np.isnan(z))).reshape(len(zs), -1).all(axis=1)
    return [variant for variant, hit in zip(zs, found, strict=True) if hit]


def describe_axes(axes: tuple[int, ...], ndim: int) -> str:
    """Words for a set of axes of an input with `ndim` axes."""
    axes = tuple(sorted(axes))
    if axes == (ndim - 1,):
        return "the last axis (the features of each record)"
    if axes == tuple(range(ndim)):
        return "the whole array at once"
    if axes == tuple(range(ndim - 1)):
        return "every leading axis (each feature across all records, as batch-norm does)"
    if ndim == 3:
        names = ("the batch axis", "the token axis", "the feature axis")
        return f"axes {axes}: {' and '.join(f'{names[a]} ({a})' for a in axes)}"
    return f"axis {axes[0]}" if len(axes) == 1 else f"axes {axes}"
