"""ps7's batch-norm backward batteries (Ioffe and Szegedy, 2015, arXiv:1502.03167).

Every cell runs on (n, d) inputs but the leading-axes cell, on ranks 3 to 5 (see
`normlab.grading.ps7_backward`); the term cells get an upstream gradient for which the other
term vanishes.
"""

from __future__ import annotations

import numpy as np

from ...grading.gradients import x_hat
from ...grading.ps7_backward import DEFAULT_EPS, FUNCTION, bcall
from ...grading.ps7_family import CHECKS
from ..live import LIVE
from ..random_inputs import each, messy, signed_gain
from . import backward_sets


def _grad(rng, shape, dy_for=None):
    """A call on messy x, gamma of both signs, and dy random, or dy_for(rng, x) when given."""
    x = messy(rng, shape, spread=(2.0, 40.0))
    dy = rng.normal(size=shape) if dy_for is None else dy_for(rng, x)
    return bcall(dy, x, signed_gain(rng, shape[-1]), tag="grad")


def _mean_free(rng, x):
    """dy with mean zero over the batch, feature by feature: the mean term vanishes."""
    dy = rng.normal(size=np.shape(x))
    return dy - dy.mean(axis=tuple(range(np.ndim(x) - 1)), keepdims=True)


def _across_x_hat(rng, x):
    """dy with a mean, but orthogonal to x_hat over the batch, feature by feature: the variance
    term vanishes (x_hat has mean zero there, so the mean stays)."""
    lead = tuple(range(np.ndim(x) - 1))  # every leading axis: the batch
    dy = rng.normal(size=np.shape(x)) + rng.normal(size=np.shape(x)[-1])
    xh, _ = x_hat(LIVE, x, DEFAULT_EPS, lead)
    return dy - xh * (dy * xh).sum(axis=lead, keepdims=True) / (xh * xh).sum(
        axis=lead, keepdims=True
    )


# (visible, hidden too): (n, d) inputs but for the leading-axes cell (see the docstring)
TWO_D = ([(6, 5), (8, 3)], [(8, 8), (12, 4), (5, 7)])
RANK_3_AND_MORE = ([(4, 3, 5), (3, 4, 2)], ([(3, 2, 2, 4), (3, 2, 2, 2, 3), (5, 2, 6)]))


BATTERIES = {
    CHECKS.cell.bnb_axis: each(_grad, *TWO_D),
    CHECKS.cell.bnb_mean_term: each(_grad, *TWO_D, dy_for=_across_x_hat),
    CHECKS.cell.bnb_variance_term: each(_grad, *TWO_D, dy_for=_mean_free),
    CHECKS.cell.bnb_dgamma_dbeta: each(_grad, *TWO_D),
    CHECKS.cell.bnb_every_leading_axis: each(_grad, *RANK_3_AND_MORE),
    CHECKS.cell.bnb_dtype_and_shape: backward_sets.dtypes(
        FUNCTION,
        (
            [((4, 6), np.float64), ((5, 3), np.float32)],
            [((6, 6), np.float64), ((5, 5), np.float32), ((9, 2), np.float32)],
        ),
    ),
    CHECKS.cell.bnb_input_untouched: backward_sets.untouched(FUNCTION, ([(3, 5)], [(6, 4)])),
    CHECKS.cell.bnb_reference_reuse: each(_grad, [(6, 5)], [(8, 4)]),
}
