"""ps5_backward: the student writes `layer_norm_backward(dy, x, gamma, eps=1e-5)`.

It returns (dx, dgamma, dbeta). With x_hat = (x - mu) / sigma, sigma = sqrt(var + eps)
(Ba, Kiros and Hinton, 2016, arXiv:1607.06450) and g = dy * gamma, per record of d
features

    dbeta  = sum over records of dy
    dgamma = sum over records of dy * x_hat
    dx     = (g - mean(g) - x_hat * mean(g * x_hat)) / sigma

Each term of dx is one classic slip, each judged by a property that shows it alone: the mean
term makes every record's dx sum to zero (LayerNorm ignores a shift); the variance term makes
dx orthogonal to x_hat (it ignores a rescaling, up to eps); gamma enters only through g,
dx(dy, x, gamma) = dx(dy * gamma, x, 1); 1 / sigma is all that is left when dy is orthogonal
to 1 and to x_hat.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from . import gradients
from .evidence import amount, first_beyond, fmt, record, where, worst
from .gradients import dots, sums, triple, x_hat, x_hat_questions
from .judges import each_case, each_pair
from .spec import check_spec, registry

ASSIGNMENT = "ps5_backward"
FUNCTION = "layer_norm_backward"
bcall = partial(gradients.call, FUNCTION)


def _dbeta(seen):
    case, out = seen.case, seen.value
    dy = case.args[0]
    want = dy.reshape(-1, dy.shape[-1]).sum(axis=0)
    index = worst(out[2], want, 1e-9, 1e-12)
    if index is None:
        return None
    n = dy.size // dy.shape[-1]
    hint = ""
    if worst(out[2], want / n, 1e-9, 1e-12) is None:
        hint = " You averaged; beta is added to every record, so its gradient is the sum."
    return (
        f"dbeta: for {where(case)}, dbeta[{index[0]}] = {fmt(out[2][index])}, but it is "
        f"the sum of dy over every record (every leading axis) = {fmt(want[index])}.{hint}"
    )


def _dgamma(seen):
    case, out = seen.case, seen.value
    dy, x = case.args[0], case.args[1]
    xh, _ = x_hat(seen.oracle, x, case.meta["eps"])
    want = (dy * xh).reshape(-1, x.shape[-1]).sum(axis=0)
    index = worst(out[1], want, 1e-4, 1e-9 * (1 + np.abs(want).max()))
    if index is None:
        return None
    return (
        f"dgamma: for {where(case)}, dgamma[{index[0]}] = {fmt(out[1][index])}, but "
        f"dgamma is the sum over records of dy * x_hat (the normalized input, "
        f"(x - mu) / sqrt(var + eps)) = {fmt(want[index])}."
    )


def _mean_term(seen):
    case, dx = seen.case, seen.value[0]
    total, limit = sums(dx, (dx.ndim - 1,))
    r = first_beyond(total, limit)
    if r is None:
        return None
    return (
        f"Mean term: for {where(case)}, record {record(r)} of dx sums to "
        f"{fmt(total[r])}, not 0. Adding a constant to a record does not change its "
        f"LayerNorm, so dx must sum to zero over each record: subtract mean(g), the term "
        f"that comes from differentiating through mu."
    )


def _variance_term(seen):
    case, dx = seen.case, seen.value[0]
    dot, limit = dots(seen, dx, (dx.ndim - 1,))
    r = first_beyond(dot, limit)
    if r is None:
        return None
    return (
        f"Variance term: for {where(case)}, record {record(r)} of dx is not orthogonal to "
        f"x_hat (dx . x_hat = {fmt(dot[r])}). Rescaling a record barely changes its "
        f"LayerNorm, so dx . x_hat is about 0: subtract x_hat * mean(g * x_hat), the term "
        f"that comes from differentiating through sigma."
    )


def _gamma(seen):
    """a: dx with gamma; b: dx for dy * gamma with gamma = 1 (the same inputs, folded)."""
    case, a, b = seen.case, seen.first, seen.value
    index = worst(a[0], b[0], 1e-8, 1e-10 * (1 + np.abs(b[0]).max()))
    if index is None:
        return None
    return (
        f"gamma in dx: for {where(case)}, dx with gamma differs from dx for dy * gamma "
        f"with gamma = 1 (at {tuple(int(i) for i in index)}: {fmt(a[0][index])} vs "
        f"{fmt(b[0][index])}). The gradient reaches x_hat as g = dy * gamma: use g "
        f"everywhere in dx."
    )


def _judge_over(message_head: str, hint: str):
    def rule(seen):
        case, out = seen.case, seen.value
        _, sigma = x_hat(seen.oracle, case.args[1], case.meta["eps"])
        want = case.args[0] / sigma  # dy orthogonal to 1 and x_hat: dx = g / sigma
        index = worst(out[0], want, 1e-4, 1e-10 * (1 + np.abs(want).max()))
        if index is None:
            return None
        r = tuple(index[:-1])
        return (
            f"{message_head}: for {where(case)} and a dy orthogonal to 1 and to x_hat (so both "
            f"correction terms vanish and dx = dy * gamma / sigma), record "
            f"{record(r) if r else 0} of dx is {fmt(out[0][r])}; expected {fmt(want[r])}. {hint}"
        )

    return each_case(triple, rule)


def _judge_independence(cases, results, oracle):
    base = {}  # block -> dx of the unchanged batch (each block's base case comes first)

    def rule(seen):
        case, out = seen.case, seen.value
        if case.tag == "base":
            base[case.meta["block"]] = out[0]
            return None
        target = case.meta["record"]
        moved = np.abs(out[0] - base[case.meta["block"]]).max(axis=-1)
        moved[target] = 0.0
        if moved.max() > 1e-10:
            other = tuple(int(i) for i in np.unravel_index(np.argmax(moved), moved.shape))
            return (
                f"Independence: changing record {target} (its x and dy) changed dx of record "
                f"{other} (by up to {amount(moved[other])}). LayerNorm's statistics are per "
                f"record, so are the means in its gradient: take them over the last axis only."
            )
        return None

    return each_case(triple, rule)(cases, results, oracle)


CHECKS = registry(
    ASSIGNMENT,
    check_spec(
        "dbeta",
        FUNCTION,
        each_case(triple, _dbeta),
        "dbeta: sum of dy over every record",
        misconception="dbeta not the sum of dy over records",
        points=2,
    ),
    check_spec(
        "dgamma",
        FUNCTION,
        each_case(triple, _dgamma),
        "dgamma: sum of dy * x_hat over records",
        misconception="dgamma not the sum of dy * x_hat",
        points=2,
        questions=x_hat_questions,
    ),
    check_spec(
        "dx_mean_term",
        FUNCTION,
        each_case(triple, _mean_term),
        "dx: the mean term (sums to zero)",
        misconception="dx without the mean term",
        points=3,
    ),
    check_spec(
        "dx_variance_term",
        FUNCTION,
        each_case(triple, _variance_term),
        "dx: the variance term (dx . x_hat)",
        misconception="dx without the variance term",
        points=3,
        questions=x_hat_questions,
    ),
    check_spec(
        "dx_gamma",
        FUNCTION,
        each_pair(triple, _gamma),
        "dx: gamma enters through g = dy * gamma",
        misconception="gamma misplaced in dx",
        points=2,
    ),
    check_spec(
        "dx_scale",
        FUNCTION,
        _judge_over("Scale of dx", "Divide by sigma = sqrt(var + eps), the population std."),
        "dx: divided by sigma",
        misconception="dx not divided by sigma",
        points=3,
        questions=x_hat_questions,
    ),
    check_spec(
        "eps_placement",
        FUNCTION,
        _judge_over("eps in the backward pass", "sigma = sqrt(var + eps): eps inside the root."),
        "eps inside sigma, the argument honoured",
        misconception="eps outside sigma, or ignored",
        points=2,
        questions=x_hat_questions,
    ),
    check_spec(
        "independence",
        FUNCTION,
        _judge_independence,
        "dx per record",
        misconception="dx mixes records",
        points=2,
    ),
    gradients.dtype_and_shape_spec(FUNCTION, points=1),
    gradients.input_untouched_spec(FUNCTION, points=1),
    gradients.gradient_reuse_spec("reference_reuse", FUNCTION, points=4),
)
