"""ps3 Part C: batch-norm's running statistics, in torch's convention.

The student writes `batch_norm_forward(x, gamma, beta, running_mean, running_var,
momentum=0.1, training=True, eps=1e-5) -> (y, new_running_mean, new_running_var)`, one step of
batch-norm with the statistics it keeps for inference (Ioffe and Szegedy, 2015,
arXiv:1502.03167, Algorithm 1 and section 3.1), as `torch.nn.BatchNorm1d` keeps them
(features on the last axis, statistics over every other axis):

    training  y = gamma * (x - mean) / sqrt(var + eps) + beta       var: population (n)
              running_mean <- (1 - momentum) * running_mean + momentum * mean
              running_var  <- (1 - momentum) * running_var  + momentum * var * n / (n - 1)
    eval      y = gamma * (x - running_mean) / sqrt(running_var + eps) + beta
              the running statistics come back unchanged

A batch of one record raises ValueError in training and is fine in eval. Each cell reads one
part of the triple in one mode, against the oracle's answers. No message gives an expected value.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from normlab_sandbox.cases import Case

from . import normchecks
from .evidence import THREE_ARRAYS, arrays_output, near, shown_type, undefined, where
from .judges import each_case, must_raise, returned
from .oracle import ASK
from .qualified import Apart, qualified_judge
from .spec import check_spec

FUNCTION = "batch_norm_forward"
PARTS = ("y", "running_mean", "running_var")
NAMES = ("x", "gamma", "beta", "running_mean", "running_var", "momentum", "training", "eps")
DEFAULT_EPS = 1e-5
WORDS = {"momentum": "the momentum"}


def call(x, gamma, beta, running_mean, running_var, *, momentum, training, tag="") -> Case:
    """A call of batch_norm_forward, momentum and training by keyword (eps: its default)."""
    x = np.asarray(x)
    kwargs = {"momentum": float(momentum), "training": bool(training)}
    label = f"a batch of shape {x.shape} in " + (
        f"training mode, momentum = {momentum:g}" if training else "eval mode"
    )
    label += f", {x.dtype}" if x.dtype != np.float64 else ""
    args = (x, *(np.asarray(a) for a in (gamma, beta, running_mean, running_var)))
    meta = {"eps": DEFAULT_EPS}
    return Case(FUNCTION, "call", args, kwargs=kwargs, tag=tag, label=label, meta=meta)


def triple(case: Case, result):
    """Reader: (y, running_mean, running_var) as float64 arrays of x's shape and (d,)."""
    x = case.args[0]
    d = x.shape[-1:]
    return arrays_output(FUNCTION, case, result, PARTS, shapes=(x.shape, d, d))


def questions(case: Case) -> list:
    """The batch's statistics, and the reference's answer (none for a training batch of one)."""
    asked = [ASK.statistics(np.asarray(case.args[0], dtype=np.float64))]
    n = int(np.prod(np.shape(case.args[0])[:-1]))
    if n > 1 or not case.kwargs["training"]:
        asked.append(ASK.reference(FUNCTION, *case.args, **case.kwargs))
    return asked


def _batch(seen) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(mean, population variance, unbiased variance, n) of each feature over the batch."""
    x = np.asarray(seen.case.args[0], dtype=np.float64)
    found, lead = seen.oracle.statistics(x), tuple(range(x.ndim - 1))
    mean, population = found[lead, 0]
    return mean, population, found[lead, 1][1], int(np.prod(x.shape[:-1]))


def _want(seen) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return seen.oracle.reference(FUNCTION, *seen.case.args, **seen.case.kwargs)


_close = partial(near, rtol=1e-7, atol=1e-9)


def _given(case: Case) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """(momentum, gamma, beta, running_mean, running_var, eps) of a case, float64."""
    gamma, beta, mean, var = (np.asarray(a, dtype=np.float64) for a in case.args[1:5])
    return case.kwargs["momentum"], gamma, beta, mean, var, case.meta["eps"]


def _normalized(seen, mean, var) -> np.ndarray:
    _, gamma, beta, _, _, eps = _given(seen.case)
    return gamma * (seen.case.args[0] - mean) / np.sqrt(var + eps) + beta  # in float64


def _momentum(seen):
    case, (_, running_mean, _) = seen.case, seen.value
    if _close(running_mean, _want(seen)[1]):
        return None
    m, _, _, before, _, _ = _given(case)
    mean = _batch(seen)[0]
    if _close(running_mean, m * before + (1 - m) * mean):
        return (
            f"Momentum the wrong way round: for {where(case)}, your running_mean keeps "
            f"momentum * running_mean + (1 - momentum) * the batch's mean, Keras' convention. "
            f"In torch's, momentum is the weight of the new batch: (1 - momentum) * "
            f"running_mean + momentum * the batch's mean."
        )
    if _close(running_mean, before):
        return (
            f"Running mean: for {where(case)}, your running_mean came back unchanged in "
            f"training mode; each training step moves it toward the batch's mean, "
            f"(1 - momentum) * running_mean + momentum * the batch's mean."
        )
    return (
        f"Running mean: for {where(case)}, your running_mean is not (1 - momentum) * "
        f"running_mean + momentum * the batch's mean of each feature (over every leading "
        f"axis). Check the mean's axes and that momentum weighs the batch."
    )


def _running_var(seen):
    case, (_, _, running_var) = seen.case, seen.value
    if _close(running_var, _want(seen)[2]):
        return None
    m, _, _, _, before, _ = _given(case)
    _, population, unbiased, n = _batch(seen)
    for weight in (m, 1 - m):  # torch's momentum, or the other way round: bnf_momentum's
        blend = (1 - weight) * before
        if _close(running_var, blend + weight * unbiased):
            return Apart(("momentum",))
        if _close(running_var, blend + weight * population):
            return (
                f"Running variance biased: for {where(case)}, your running_var moves toward "
                f"the batch's population variance (divide by n). torch keeps the unbiased "
                f"estimate in running_var, the batch's variance times n / (n - 1) (here "
                f"n = {n} records per feature), while the output is still normalized with "
                f"the population variance."
            )
    if _close(running_var, before):
        return (
            f"Running variance: for {where(case)}, your running_var came back unchanged in "
            f"training mode; each training step moves it toward the batch's unbiased "
            f"variance."
        )
    return (
        f"Running variance: for {where(case)}, your running_var is not (1 - momentum) * "
        f"running_var + momentum * the batch's unbiased variance of each feature (divide by "
        f"n - 1, over every leading axis)."
    )


def _train_output(seen):
    case, (y, _, _) = seen.case, seen.value
    if _close(y, _want(seen)[0]):
        return None
    mean, _, unbiased, _ = _batch(seen)
    if _close(y, _normalized(seen, mean, unbiased)):
        return (
            f"Unbiased variance in the output: for {where(case)}, your y is normalized with "
            f"the batch's unbiased variance (divide by n - 1). Batch-norm normalizes with the "
            f"population variance (divide by n), as your batch_norm of Part A does; only "
            f"running_var keeps the unbiased one."
        )
    _, _, _, before_mean, before_var, _ = _given(case)
    if _close(y, _normalized(seen, before_mean, before_var)):
        return (
            f"Training output: for {where(case)}, your y is normalized with running_mean and "
            f"running_var. In training mode the batch's own mean and population variance "
            f"normalize it; the running statistics are for eval."
        )
    return (
        f"Training output: for {where(case)}, your y is not x normalized per feature with the "
        f"batch's mean and population variance (over every leading axis, eps inside the "
        f"square root), times gamma, plus beta."
    )


def _eval_output(seen):
    case, (y, _, _) = seen.case, seen.value
    if _close(y, _want(seen)[0]):
        return None
    mean, population, _, _ = _batch(seen)
    if _close(y, _normalized(seen, mean, population)):
        return (
            f"Eval with the batch's statistics: for {where(case)}, your y is normalized with "
            f"this batch's own mean and variance. In eval mode batch-norm normalizes with "
            f"running_mean and running_var, the statistics of training, so a record's output "
            f"does not depend on the rest of the batch."
        )
    return (
        f"Eval output: for {where(case)}, your y is not x normalized with running_mean and "
        f"running_var (eps inside the square root), times gamma, plus beta."
    )


def _eval_frozen(seen):
    case = seen.case
    for name, got, before in zip(PARTS[1:], seen.value[1:], _given(case)[3:5], strict=True):
        if not np.array_equal(got, before):
            return (
                f"Eval updates the running statistics: for {where(case)}, your {name} came "
                f"back changed. In eval mode the running statistics normalize the batch and "
                f"are not updated: return them unchanged (copies are fine)."
            )
    return None


_one_in_training = normchecks.refuses_one_record(
    FUNCTION,
    "Batch of one in training",
    "One record per feature has nothing to average over (every output would be beta, and the "
    "unbiased variance divides by n - 1 = 0): raise ValueError with a message, as torch does "
    "in training.",
    sep=", ",
)


def _read_one_in_eval(case: Case, result):
    """Reader of the eval batch of one: the triple, but a raise is this cell's misconception."""
    if result.error and result.error[0] != "NotImplementedError" and not undefined(case, result):
        kind, text = result.error
        return None, (
            f"Batch of one in eval: for {where(case)}, {FUNCTION} raised {kind} ({text}). In "
            f"eval mode the running statistics normalize each record, so one record is fine "
            f"(a model serving one request): refuse a batch of one in training only."
        )
    return triple(case, result)


def _dtype(seen):
    case, out, result = seen.case, seen.value, seen.result
    if result.output_type not in THREE_ARRAYS:
        return (
            f"Type: {FUNCTION} must return three NumPy arrays (y, new_running_mean, "
            f"new_running_var); it returned {shown_type(result)} ({where(case)})."
        )
    x = case.args[0]
    y, *running = out
    if y.shape != x.shape:
        return f"Shape: for {where(case)}, y has shape {y.shape}; it has x's shape {x.shape}."
    if y.dtype != x.dtype:
        return (
            f"dtype: for {where(case)}, y is {y.dtype}; a {x.dtype} input gives a {x.dtype} "
            f"output (compute in float64 if you like, then cast back with .astype(x.dtype))."
        )
    for name, value in zip(PARTS[1:], running, strict=True):
        if value.shape != x.shape[-1:]:
            return (
                f"Shape: for {where(case)}, the new {name} has shape {value.shape}; it has "
                f"shape {x.shape[-1:]}, one value per feature."
            )
        if value.dtype.kind != "f":
            return (
                f"dtype: for {where(case)}, the new {name} is {value.dtype}; running "
                f"statistics are floats."
            )
    return None


MOMENTUM = check_spec(
    "bnf_momentum",
    FUNCTION,
    each_case(triple, _momentum),
    "training: running_mean <- (1 - momentum) * running_mean + momentum * batch mean",
    misconception="momentum the wrong way round",
    points=1,
    questions=questions,
)
SPECS = (
    MOMENTUM,
    check_spec(
        "bnf_running_var_unbiased",
        FUNCTION,
        qualified_judge(triple, _running_var, {"momentum": MOMENTUM.grade_id}, WORDS),
        "training: running_var moves toward the batch's unbiased variance",
        misconception="the running variance biased (population variance)",
        points=2,
        questions=questions,
        apart_from=(MOMENTUM.grade_id,),
    ),
    check_spec(
        "bnf_train_population_variance",
        FUNCTION,
        each_case(triple, _train_output),
        "training: normalized with the batch's population variance",
        misconception="normalized with the unbiased variance",
        points=1,
        questions=questions,
    ),
    check_spec(
        "bnf_eval_running_stats",
        FUNCTION,
        each_case(triple, _eval_output),
        "eval: normalized with the running statistics",
        misconception="eval normalizes with the batch's statistics",
        points=2,
        questions=questions,
    ),
    check_spec(
        "bnf_eval_frozen",
        FUNCTION,
        each_case(triple, _eval_frozen),
        "eval: the running statistics come back unchanged",
        misconception="eval updates the running statistics",
        points=1,
    ),
    check_spec(
        "bnf_batch_of_one_training",
        FUNCTION,
        must_raise(_one_in_training),
        "training: a batch of one record raises ValueError",
        misconception="a batch of one normalized in training",
        points=1,
    ),
    check_spec(
        "bnf_batch_of_one_eval",
        FUNCTION,
        each_case(_read_one_in_eval),
        "eval: a batch of one record works",
        misconception="a batch of one refused in eval",
        points=1,
    ),
    check_spec(
        "bnf_dtype_and_shape",
        FUNCTION,
        each_case(returned, _dtype),
        "returns y of x's shape and dtype, and two running statistics of shape (d,)",
        misconception="the outputs' type, shape or dtype wrong",
        points=1,
    ),
    normchecks.untouched_spec(
        "bnf_input_untouched",
        FUNCTION,
        NAMES,
        points=1,
        summary="does not write into its arguments (the running statistics included)",
    ),
    normchecks.reuse_spec(
        "bnf_reference_reuse",
        FUNCTION,
        points=2,
        read=triple,
        library="a library batch-norm",
        summary="written by hand: no library batch-norm called",
        misconception="a library batch-norm called",
    ),
)
