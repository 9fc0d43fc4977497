"""Verify an implementation's output against the float64 reference before it is timed.

LayerNorm treats every record (row) on its own, so a sample of rows checks the
whole computation: the first and last rows (where a blocked loop starts and ends)
and rows spread in between. The reference is `normlab.layer_norm` (Ba, Kiros and
Hinton, 2016, arXiv:1607.06450) in float64 on the very values the implementation
read, so the difference is the implementation's own rounding.

Tolerance, element by element: |y - y64| <= rtol |y64| + atol, with rtol one unit
of the output dtype's precision (rounding the result to float16 costs up to half
of one) and atol = 32 units of the compute precision times the size of the terms
that are added, |x_hat gamma| + |beta|. Statistics over the wrong axis, RMS in
place of the standard deviation, or even the variance divided by d - 1 (a relative
error of 1/(2d), 1e-4 at d = 4096) fail it clearly.
"""

from __future__ import annotations

import numpy as np

from ..layer_norm import layer_norm

EDGE_ROWS = 256
SPREAD_ROWS = 512


class CheckFailed(AssertionError):
    """An implementation disagrees with the float64 reference; it is not timed."""


def rows_to_check(n: int, seed: int = 0) -> np.ndarray:
    """All rows when there are few, else the first and last EDGE_ROWS and a spread sample."""
    if n <= 2 * EDGE_ROWS + SPREAD_ROWS:
        return np.arange(n)
    middle = np.random.default_rng(seed).choice(
        np.arange(EDGE_ROWS, n - EDGE_ROWS), SPREAD_ROWS, replace=False
    )
    return np.concatenate([np.arange(EDGE_ROWS), np.sort(middle), np.arange(n - EDGE_ROWS, n)])


def precision(dtype_name: str) -> float:
    """Unit roundoff-style epsilon (spacing at 1.0) of a dtype named as in numpy/torch."""
    return {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}[
        dtype_name
    ]


def compute_precision(dtype_name: str) -> float:
    """Half precision is computed in float32 (normlab's rule, and torch's)."""
    return precision("float64" if dtype_name == "float64" else "float32")


def check_layer_norm(y_rows, x_rows, gamma, beta, eps: float, dtype_name: str, label: str) -> float:
    """Compare rows of an output with the float64 reference; return max |y - y64|.

    All arrays are float64 NumPy holding the values the implementation saw:
    x_rows (m, d), gamma and beta (d,) or None, y_rows (m, d). Raises CheckFailed.
    """
    expected = layer_norm(x_rows, gamma, beta, eps)  # (m, d) float64
    y_rows = np.asarray(y_rows, dtype=np.float64)
    if y_rows.shape != expected.shape:
        raise CheckFailed(f"{label}: output rows have shape {y_rows.shape}, not {expected.shape}")
    terms = np.abs(layer_norm(x_rows, None, None, eps) * (1.0 if gamma is None else gamma))
    if beta is not None:
        terms = terms + np.abs(beta)
    atol = 32 * compute_precision(dtype_name) * float(terms.max())
    error = np.abs(y_rows - expected)  # (m, d)
    allowed = precision(dtype_name) * np.abs(expected) + atol
    if not np.all(error <= allowed):  # NaN fails too
        worst = np.unravel_index(np.nanargmax(error - allowed), error.shape)
        raise CheckFailed(
            f"{label}: disagrees with the float64 reference at checked row {worst[0]}, "
            f"feature {worst[1]}: got {y_rows[worst]!r}, expected {expected[worst]!r} "
            f"(max error {float(np.nanmax(error)):.3g}, allowed {float(allowed[worst]):.3g})"
        )
    return float(error.max())


def check_copy(y_rows, x_rows, label: str) -> float:
    """A copy must reproduce its input exactly."""
    if not np.array_equal(np.asarray(y_rows), np.asarray(x_rows)):
        raise CheckFailed(f"{label}: the copy differs from its source")
    return 0.0
