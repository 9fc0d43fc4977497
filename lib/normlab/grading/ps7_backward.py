"""ps7's batch-norm backward cells: the student writes `batch_norm_backward(dy, x, gamma,
eps=1e-5)` and returns (dx, dgamma, dbeta).

Batch-norm (Ioffe and Szegedy, 2015, arXiv:1502.03167) standardizes each feature over the
batch, every leading axis of x (..., d); its backward is LayerNorm's (Ba, Kiros and Hinton,
2016, arXiv:1607.06450) with the means over the batch. With x_hat and sigma per feature,
g = dy * gamma and the means over every leading axis,

    dx = (g - mean(g) - x_hat * mean(g * x_hat)) / sigma,
    dgamma = sum of dy * x_hat,   dbeta = sum of dy   (over every leading axis).

As in ps5, the mean term makes dx sum to zero and the variance term makes it orthogonal to
x_hat, over the axes the statistics run on; the axes where either holds are those the student's
means run over (`means_over`): every leading axis, the features (LayerNorm's backward) or the
first axis only. The term cells choose a dy for which the other term vanishes, then ask for the
exact dx. Only `bnb_every_leading_axis` uses inputs of rank 3 to 5, the others (n, d), so a
gradient written for 2-D input only (CS231n's form) loses that one cell. No message gives an
expected value.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from . import gradients
from .evidence import arrays_output, first_beyond, fmt, near, record, where, worst
from .gradients import dots, sums, triple, x_hat, x_hat_questions
from .judges import each_case
from .spec import check_spec

FUNCTION = "batch_norm_backward"
DEFAULT_EPS = 1e-5
bcall = partial(gradients.call, FUNCTION)

# the axes a gradient can take its means over, as the judges tell them apart
LEADING = "every leading axis"
FEATURES = "the features"
FIRST = "the first axis"


def _candidates(ndim: int) -> list[tuple[str, tuple[int, ...]]]:
    """(name, axes), the narrowest first: the first axis is one of the leading ones."""
    first = [(FIRST, (0,))] if ndim > 2 else []
    return [*first, (FEATURES, (ndim - 1,)), (LEADING, tuple(range(ndim - 1)))]


def _zero(values, limit) -> bool:
    return bool(np.all(np.abs(values) <= limit))


def means_over(seen, dx: np.ndarray) -> str | None:
    """The axes the gradient's means run over: the first candidate on which dx sums to zero
    or is orthogonal to x_hat; None when on none, or when dx is zero (it says nothing)."""
    if not np.abs(dx).max() > 1e-12:
        return None
    for name, axes in _candidates(dx.ndim):
        if _zero(*sums(dx, axes)) or _zero(*dots(seen, dx, axes)):
            return name
    return None


def _lead(x) -> tuple[int, ...]:
    return tuple(range(np.ndim(x) - 1))


def _axis(seen):
    case, dx = seen.case, seen.value[0]
    if means_over(seen, dx) != FEATURES:
        return None
    return (
        f"Wrong axis: for {where(case)}, each record of your dx sums to zero over its own "
        f"features, or is orthogonal to the record's own x_hat: your gradient takes its means "
        f"over the last axis, as LayerNorm's backward does. Batch-norm standardizes each "
        f"feature over the batch, so the means in its gradient run over every leading axis."
    )


def _per_position(case, result):
    """Reader of the leading-axes cell: `triple`, but dgamma or dbeta of shape x.shape[1:] (a
    gradient for (N, D) input alone) or dx of another shape is this cell's misconception."""
    arrays, problem = arrays_output(case.target, case, result, ("dx", "dgamma", "dbeta"))
    if problem:
        return None, problem
    x = case.args[1]
    parameters = zip(("dgamma", "dbeta"), arrays[1:], strict=True)
    per_position = [name for name, a in parameters if a.shape == x.shape[1:]]
    if per_position:
        return None, (
            f"Sums over the first axis only: for {where(case)}, your {per_position[0]} has "
            f"shape {x.shape[1:]}, one per position of axis 1 on: your gradient treats x as "
            f"(N, D). Batch-norm's statistics, and the sums that make dgamma and dbeta, run "
            f"over every leading axis, one value per feature."
        )
    if arrays[0].shape != x.shape:
        return None, (
            f"Leading axes: for {where(case)}, your dx has shape {arrays[0].shape}; it has "
            f"x's shape, every leading axis kept."
        )
    return triple(case, result)


def _every_leading_axis(seen):
    case, dx = seen.case, seen.value[0]
    if means_over(seen, dx) != FIRST:
        return None
    batch = " x ".join(str(n) for n in dx.shape[:-1])
    return (
        f"Statistics over the first axis only: for {where(case)}, your dx sums to zero over "
        f"axis 0 alone, for each position and feature: your gradient takes one set of "
        f"statistics per position of the other leading axes. Batch-norm takes them over every "
        f"leading axis, all {batch} records of each feature, as batch_norm does."
    )


def _exact(seen, want, term: str):
    """None when dx is `want` (to 1e-7), else the message of the term's cell."""
    case, dx = seen.case, seen.value[0]
    index = worst(dx, want, 1e-7, 1e-10 * (1.0 + np.abs(want).max()))
    if index is None:
        return None
    return (
        f"dx: for {where(case)} and a dy for which the {term} term vanishes, your dx at "
        f"{record(index)} is {fmt(dx[index])}, not the gradient: check the other term, gamma "
        f"(g = dy * gamma) and the division by sigma = sqrt(var + eps), the population "
        f"variance of each feature over the batch."
    )


def _mean_term(seen):
    case, dx = seen.case, seen.value[0]
    if means_over(seen, dx) in (FEATURES, FIRST):
        return None  # the axis cells' misconceptions
    lead = _lead(dx)
    total, limit = sums(dx, lead)
    if not _zero(total, limit):
        k = first_beyond(total, limit)[0]
        return (
            f"Mean term: for {where(case)}, your dx of feature {k} sums to {fmt(total[k])} over "
            f"the batch, not 0. Adding a constant to a feature does not change its batch-norm, "
            f"so dx sums to zero over every leading axis: the gradient through the batch mean "
            f"is missing."
        )
    dy, x, gamma = case.args[:3]
    _, sigma = x_hat(seen.oracle, x, case.meta["eps"], lead)
    g = dy * gamma
    return _exact(seen, (g - g.mean(axis=lead, keepdims=True)) / sigma, "variance")


def _variance_term(seen):
    case, dx = seen.case, seen.value[0]
    if means_over(seen, dx) in (FEATURES, FIRST):
        return None  # the axis cells' misconceptions
    lead = _lead(dx)
    dot, limit = dots(seen, dx, lead)
    if not _zero(dot, limit):
        k = first_beyond(dot, limit)[0]
        return (
            f"Variance term: for {where(case)}, your dx of feature {k} is not orthogonal to "
            f"x_hat over the batch (dx . x_hat = {fmt(dot[k])}): the variance is treated as a "
            f"constant. Rescaling a feature barely changes its batch-norm, so dx . x_hat is "
            f"about 0 over every leading axis: the gradient through the batch variance is "
            f"missing."
        )
    dy, x, gamma = case.args[:3]
    xh, sigma = x_hat(seen.oracle, x, case.meta["eps"], lead)
    g = dy * gamma
    return _exact(seen, (g - xh * (g * xh).mean(axis=lead, keepdims=True)) / sigma, "mean")


_close = partial(near, rtol=1e-8, atol=1e-10)


def _dgamma_dbeta(seen):
    case, (_, dgamma, dbeta) = seen.case, seen.value
    dy, x = case.args[:2]
    eps, lead = case.meta["eps"], _lead(x)
    sum_dy = dy.sum(axis=lead)
    sums_dy_x_hat = {
        name: (dy * x_hat(seen.oracle, x, eps, axes)[0]).sum(axis=lead)
        for name, axes in _candidates(x.ndim)
    }
    if _close(dbeta, sum_dy) and _close(dgamma, sums_dy_x_hat[LEADING]):
        return None
    if _close(dgamma, sum_dy) and _close(dbeta, sums_dy_x_hat[LEADING]):
        return (
            f"dgamma and dbeta swapped: for {where(case)}, your dgamma is the sum of dy and "
            f"your dbeta the sum of dy * x_hat. gamma multiplies x_hat, so its gradient carries "
            f"x_hat; beta is added, so its gradient is dy alone. Return (dx, dgamma, dbeta)."
        )
    if not _close(dbeta, sum_dy):
        k = int(worst(dbeta, sum_dy, 1e-8, 1e-10 * (1.0 + np.abs(sum_dy).max()))[0])
        return (
            f"dbeta: for {where(case)}, your dbeta[{k}] = {fmt(dbeta[k])} is not the sum of dy "
            f"over every leading axis: beta is added to every record, so each record's dy "
            f"counts once."
        )
    if any(_close(dgamma, other) for other in sums_dy_x_hat.values()):
        return None  # x_hat over other axes: the axis cells' misconceptions
    k = int(worst(dgamma, sums_dy_x_hat[LEADING], 1e-8, 1e-10)[0])
    return (
        f"dgamma: for {where(case)}, your dgamma[{k}] = {fmt(dgamma[k])} is not the sum over "
        f"every leading axis of dy * x_hat, with x_hat each feature standardized over the "
        f"batch."
    )


_cell_spec = partial(check_spec, questions=x_hat_questions)  # every rule may ask for x_hat
SPECS = (
    _cell_spec(
        "bnb_axis",
        FUNCTION,
        each_case(triple, _axis),
        "means over the batch, not the features",
        misconception="the means over the features (LayerNorm's backward)",
        points=2,
    ),
    _cell_spec(
        "bnb_mean_term",
        FUNCTION,
        each_case(triple, _mean_term),
        "dx: the mean term (sums to zero over the batch)",
        misconception="dx without the mean term",
        points=2,
    ),
    _cell_spec(
        "bnb_variance_term",
        FUNCTION,
        each_case(triple, _variance_term),
        "dx: the variance term (dx . x_hat over the batch)",
        misconception="the variance treated as a constant",
        points=2,
    ),
    _cell_spec(
        "bnb_dgamma_dbeta",
        FUNCTION,
        each_case(triple, _dgamma_dbeta),
        "dgamma = sum of dy * x_hat, dbeta = sum of dy",
        misconception="dgamma and dbeta swapped, or wrong",
        points=1,
    ),
    _cell_spec(
        "bnb_every_leading_axis",
        FUNCTION,
        each_case(_per_position, _every_leading_axis),
        "statistics over every leading axis",
        misconception="statistics over the first axis only",
        points=1,
    ),
    gradients.dtype_and_shape_spec(FUNCTION, "bnb_dtype_and_shape", points=1),
    gradients.input_untouched_spec(FUNCTION, "bnb_input_untouched", points=1),
    gradients.gradient_reuse_spec("bnb_reference_reuse", FUNCTION, points=2),
)
