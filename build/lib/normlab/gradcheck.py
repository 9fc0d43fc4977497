"""Central finite differences: an independent judge of a hand-derived gradient.

The backward pass of layer normalization (Ba, Kiros and Hinton, 2016,
arXiv:1607.06450) is derived by hand in `normlab.backward`; this file checks such
derivations without any calculus of its own: nudge one input by +h and -h and
measure how the scalar loss moves,

    dL/da_i ~ (L(a + h e_i) - L(a - h e_i)) / (2 h),

with an error of order h^2 (plus rounding of order eps_machine / h).
"""

from __future__ import annotations

import numpy as np


def numerical_gradient(loss, a: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Gradient of the scalar function `loss` at `a` by central differences, entry by entry.

    `a` (float64) is never modified; the result has its shape. Costs 2 a.size calls.
    """
    a = np.asarray(a, dtype=np.float64)
    grad = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[index] += h
        down[index] -= h
        grad[index] = (loss(up) - loss(down)) / (2 * h)
    return grad


def numerical_norm_gradients(norm, dy, x, gamma, beta, h: float = 1e-6):
    """(dx, dgamma, dbeta) of L = sum(dy * norm(x, gamma, beta)) by central differences.

    `dy` is then exactly the upstream gradient, so the result is what a backward pass
    such as `normlab.layer_norm_backward(dy, x, gamma)` must return.
    """

    def loss(x_, gamma_, beta_) -> float:
        return float(np.sum(dy * norm(x_, gamma_, beta_)))

    return (
        numerical_gradient(lambda a: loss(a, gamma, beta), x, h),
        numerical_gradient(lambda g: loss(x, g, beta), gamma, h),
        numerical_gradient(lambda b: loss(x, gamma, b), beta, h),
    )
