"""Summation order: NumPy's pairwise sum against a BLAS matrix-vector product.

LayerNorm's statistics (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) are sums over the
d features of a record. NumPy adds in pairs (pairwise summation), so the rounding error of
a sum of d terms grows like log d rather than d (Higham, 1993, SIAM J. Sci. Comput. 14(4));
a BLAS product with a vector of ones computes the same sums, faster, in an order of its
own. The bench keeps NumPy's order so that its fast LayerNorm stays bit-identical to the
reference; this measures what another order would change.
"""

from __future__ import annotations

import numpy as np


def row_sum_errors(x: np.ndarray) -> dict[str, float]:
    """Largest relative error of the row sums of float32 `x` (rows, d), per summation order.

    Relative to the sum of |x| of the row; the exact sums are the float32 values added in
    float64.
    """
    x = np.asarray(x)
    if x.dtype != np.float32 or x.ndim != 2:
        raise ValueError(f"x must be a 2-d float32 array; got {x.dtype} of shape {x.shape}")
    exact = x.astype(np.float64).sum(axis=1)  # (rows,)
    scale = np.abs(x).astype(np.float64).sum(axis=1)  # (rows,)
    sums = {
        "pairwise (np.sum)": np.add.reduce(x, axis=1),  # NumPy's sum: what the reference uses
        "BLAS (x @ ones)": x @ np.ones(x.shape[1], np.float32),  # a matrix-vector product
    }
    return {name: float(np.max(np.abs(s - exact) / scale)) for name, s in sums.items()}
