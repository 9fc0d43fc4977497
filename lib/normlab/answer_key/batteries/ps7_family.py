"""ps7_family's batteries: group norm's (Wu and He, 2018, arXiv:1803.08494) and batch-norm's
backward's (Ioffe and Szegedy, 2015, arXiv:1502.03167).

Every group norm input of rank 3 or more has its last axis of length C, so that a function that
reads its channels from the last axis runs and only the channel-axis cell, whose inputs also
have other lengths, tells (see `normlab.grading.ps7_group_norm`). Every backward cell runs on
(n, d) inputs but the leading-axes cell, on ranks 3 to 5 (see `normlab.grading.ps7_backward`);
the term cells get an upstream gradient for which the other term vanishes.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from normlab_sandbox.cases import Case

from ...grading.gradients import x_hat
from ...grading.ps7_backward import DEFAULT_EPS as BACKWARD_EPS
from ...grading.ps7_backward import FUNCTION as BACKWARD
from ...grading.ps7_backward import bcall
from ...grading.ps7_family import CHECKS
from ...grading.ps7_group_norm import DEFAULT_EPS, FUNCTION, SCALE
from ..live import LIVE
from ..random_inputs import F32, F64, each, messy, signed_affine, signed_gain
from .ps5_backward import dtype_case, untouched_case


def gcall(x, groups: int, gamma=None, beta=None, eps=None, *, tag="", **meta) -> Case:
    """A call of the student's group_norm; gamma = 1 and beta = 0 unless given, eps passed
    only when given."""
    x = np.asarray(x)
    gamma = np.ones(x.shape[1], dtype=x.dtype) if gamma is None else np.asarray(gamma)
    beta = np.zeros(x.shape[1], dtype=x.dtype) if beta is None else np.asarray(beta)
    args = (x, groups, gamma, beta) + ((eps,) if eps is not None else ())
    label = f"a {x.ndim}-D input of shape {x.shape}, num_groups = {groups}"
    label += f", eps = {eps:g}" if eps is not None else ""
    label += f", {x.dtype}" if x.dtype != np.float64 else ""
    meta = {"eps": DEFAULT_EPS if eps is None else float(eps), **meta}
    return Case(FUNCTION, "call", args, tag=tag, label=label, meta=meta)


def _plain(rng, setup, *, spread=(0.5, 50.0), params=False):
    """A call on (shape, num_groups, dtype), gamma = 1 and beta = 0 unless `params` (then
    random ones)."""
    shape, groups, dtype = setup
    c = shape[1]
    gamma, beta = (rng.uniform(0.5, 2.0, size=c), rng.normal(size=c)) if params else (None, None)
    x = messy(rng, shape, spread=spread).astype(dtype)
    return gcall(x, groups, gamma, beta, tag="plain")


def _gain_pair(rng, setup, pair: int, draw) -> list[Case]:
    """The call with gamma = 1 and beta = 0, then the call with the setup's gamma and beta (or
    `draw(rng, C)`'s), on the same x."""
    shape, groups, *given = setup
    gamma, beta = given or draw(rng, shape[1])
    x = messy(rng, shape)
    return [
        gcall(x, groups, tag="plain", pair=pair),
        gcall(x, groups, gamma, beta, tag="affine", pair=pair),
    ]


def _tiny_groups(rng, shape, groups: int) -> np.ndarray:
    """An input whose groups alternate: variance about 1e-6, zero (a constant), ordinary."""
    x = messy(rng, shape, spread=(0.5, 5.0)).reshape(shape[0] * groups, -1)  # a group a row
    for index, group in enumerate(x):
        if index % 3 == 0:
            group[:] = rng.uniform(-5, 5) + 1e-3 * rng.standard_normal(group.size)
        elif index % 3 == 1:
            group[:] = 3.0
    return x.reshape(shape)


def _eps_cases(rng, hidden: bool) -> list[Case]:
    setups = [
        (_tiny_groups(rng, (2, 4, 4), 2), 2, None, "groups of variance 1e-6 and 0"),
        (messy(rng, (3, 6), spread=(0.05, 0.2)), 3, 0.1, ""),
    ]
    if hidden:
        setups += [
            (_tiny_groups(rng, (2, 6, 2, 6), 3), 3, 1e-3, "groups of variance 1e-6 and 0"),
            (_tiny_groups(rng, (1, 4, 4), 1), 1, None, "one group of variance 1e-6"),
            (_tiny_groups(rng, (1, 4, 2, 1, 4), 2), 2, None, "groups of variance 1e-6 and 0"),
        ]
    cases = []
    for pair, (x, groups, eps, words) in enumerate(setups):
        first = gcall(x, groups, eps=eps, tag="eps", pair=pair)
        label = f"{first.label} ({words})" if words else first.label
        scaled_eps = SCALE**2 * first.meta["eps"]
        again = gcall(SCALE * x, groups, eps=scaled_eps, tag="scaled", pair=pair, first=label)
        cases.append(replace(first, label=label))
        cases.append(replace(again, label=f"that input times {SCALE:g} with eps = {scaled_eps:g}"))
    return cases


def _indivisible(rng, setup) -> Case:
    shape, groups = setup
    return gcall(messy(rng, shape), groups, tag="indivisible" if shape[1] % groups else "divisible")


_plain_cases = partial(each, _plain)  # make(rng, hidden) of (visible, hidden too) setups
# one call with random gamma and beta (two in the hidden battery)
_WITH_PARAMETERS = _plain_cases([((2, 6, 6), 3, F64)], [((2, 4, 3, 4), 2, F64)], params=True)
BATTERIES = {
    CHECKS.cell.gn_contiguous_groups: _plain_cases(
        [((2, 6, 6), 3, F64), ((3, 8), 4, F64)],
        [
            ((2, 6, 2, 6), 2, F64),
            ((1, 8, 2, 2, 8), 4, F64),
            ((2, 4, 4), 1, F64),
            ((2, 4, 4), 4, F64),
            ((2, 6, 6), 3, F32),
        ],
    ),
    CHECKS.cell.gn_instance_norm: _plain_cases(
        [((2, 6, 6), 2, F64), ((2, 4, 3, 4), 2, F64)],
        [((2, 6, 6), 1, F64), ((3, 6), 3, F64), ((1, 8, 2, 1, 8), 2, F64)],
    ),
    CHECKS.cell.gn_layer_norm: _plain_cases(
        [((2, 6, 6), 3, F64), ((4, 8), 2, F64)],
        [((2, 4, 4), 4, F64), ((2, 6, 3, 6), 2, F64), ((1, 6, 2, 2, 6), 3, F64)],
    ),
    CHECKS.cell.gn_population_variance: _plain_cases(
        [((2, 4, 4), 2, F64), ((3, 6), 3, F64)],
        [((2, 6, 2, 6), 3, F64), ((2, 4, 4), 4, F64), ((1, 4, 1, 2, 4), 1, F64)],
        spread=(2.0, 40.0),  # eps is negligible: only the divisor shows
    ),
    CHECKS.cell.gn_gain_and_bias: each(
        _gain_pair,
        # the first: gamma_0 = 2 doubles channel 0 only, beta_3 = 0.5 shifts channel 3 only
        [
            ((3, 4), 2, np.array([2.0, 1.0, 1.0, 1.0]), np.array([0.0, 0.0, 0.0, 0.5])),
            ((2, 4, 4), 2),
        ],
        [((2, 6, 2, 6), 3), ((2, 4, 4), 4), ((1, 6, 1, 1, 6), 1)],
        number="pair",
        draw=partial(signed_affine, high=3.0),
    ),
    CHECKS.cell.gn_eps_placement: _eps_cases,
    CHECKS.cell.gn_channel_axis: each(
        _gain_pair,
        [((2, 6, 6), 3), ((2, 4, 6), 2)],
        [((2, 4, 3, 4), 2), ((1, 6, 2, 2, 6), 3), ((2, 8, 5), 4)],
        number="pair",
        draw=lambda rng, c: (rng.uniform(0.5, 2.0, size=c), rng.normal(size=c)),
    ),
    CHECKS.cell.gn_indivisible_groups: each(
        _indivisible,
        [((2, 6, 6), 4), ((3, 6), 4), ((2, 6, 6), 3)],
        [((2, 4, 4), 8), ((2, 10, 3, 10), 4), ((1, 9, 2, 2, 9), 2)],
    ),
    CHECKS.cell.gn_dtype_and_shape: _plain_cases(
        [((2, 6, 6), 3, F64), ((2, 4, 3, 4), 2, F32)],
        [((3, 8), 4, F32), ((1, 6, 2, 2, 6), 3, F64), ((2, 4, 4), 4, F32)],
        spread=(0.5, 5.0),
    ),
    CHECKS.cell.gn_input_untouched: _WITH_PARAMETERS,
    CHECKS.cell.gn_reference_reuse: _WITH_PARAMETERS,
}


# -- batch_norm_backward (`normlab.grading.ps7_backward`) ------------------------------------


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
    xh, _ = x_hat(LIVE, x, BACKWARD_EPS, lead)
    along = (dy * xh).sum(axis=lead, keepdims=True)
    return dy - xh * along / (xh * xh).sum(axis=lead, keepdims=True)


# (visible, hidden too): (n, d) inputs but for the leading-axes cell (see the docstring)
TWO_D = ([(6, 5), (8, 3)], [(8, 8), (12, 4), (5, 7)])
RANK_3_AND_MORE = ([(4, 3, 5), (3, 4, 2)], ([(3, 2, 2, 4), (3, 2, 2, 2, 3), (5, 2, 6)]))


BATTERIES |= {
    CHECKS.cell.bnb_axis: each(_grad, *TWO_D),
    CHECKS.cell.bnb_mean_term: each(_grad, *TWO_D, dy_for=_across_x_hat),
    CHECKS.cell.bnb_variance_term: each(_grad, *TWO_D, dy_for=_mean_free),
    CHECKS.cell.bnb_dgamma_dbeta: each(_grad, *TWO_D),
    CHECKS.cell.bnb_every_leading_axis: each(_grad, *RANK_3_AND_MORE),
    CHECKS.cell.bnb_dtype_and_shape: each(
        dtype_case,
        [((4, 6), F64), ((5, 3), F32)],
        [((6, 6), F64), ((5, 5), F32), ((9, 2), F32)],
        function=BACKWARD,
    ),
    CHECKS.cell.bnb_input_untouched: each(untouched_case, [(3, 5)], [(6, 4)], function=BACKWARD),
    CHECKS.cell.bnb_reference_reuse: each(_grad, [(6, 5)], [(8, 4)]),
}
