"""ps2_layer_norm: the student writes `row_stats(x)` and `layer_norm(x, gamma, beta, eps=1e-5)`.

Ba, Kiros and Hinton (2016, arXiv:1607.06450), eqs. (3)-(4): mean and population variance over
the last axis of each record, then gamma * (x - mu) / sqrt(var + eps) + beta. `layer_norm`'s
cells are the shared builders of `normchecks`.
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from . import formulas, normchecks
from .evidence import arrays_output, fmt, near, record, where
from .judges import each_case
from .normchecks import LAYER_NORM
from .oracle import ASK
from .spec import check_spec, registry

ASSIGNMENT = "ps2_layer_norm"


def _stats_questions(case: Case) -> list:
    return [ASK.statistics(case.args[0])]


def _read_stats(case: Case, result):
    return arrays_output("row_stats", case, result, ("mean", "var"), things="things")


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal values, reading `got` in `want`'s shape when only the shape differs."""
    return got.size == want.size and near(got.reshape(want.shape), want, 0.0, 1e-9)


def _mean_axes(stats: dict, x: np.ndarray, mean: np.ndarray):
    """The axes the student's mean was taken over, or None."""
    return next((a for a in formulas.axis_subsets(x.ndim) if _same(mean, stats[a, 0][0])), None)


def _each_case(judge_stats):
    """The judge of a row_stats cell: judge_stats(case, x, stats, mean, var) -> None | message,
    with stats the oracle's statistics of x, {(axes, ddof): (mean, var)}."""

    def rule(seen):
        x = seen.case.args[0]
        return judge_stats(seen.case, x, seen.oracle.statistics(x), *seen.value)

    return each_case(_read_stats, rule)


@_each_case
def _judge_stats_axis(case, x, stats, mean, var):
    last = (x.ndim - 1,)
    want_mean = stats[last, 0][0]
    variances = (stats[last, 0][1], stats[last, 1][1])
    if _same(mean, want_mean) and any(_same(var, v) for v in variances):
        return None
    axes = _mean_axes(stats, x, mean)
    if axes is not None and axes != last:
        return (
            f"Wrong axis: for {where(case)}, row_stats averages over "
            f"{formulas.describe_axes(axes, x.ndim)}. The statistics of a record are over its "
            f"own features, the last axis: x.mean(axis=-1) has shape {want_mean.shape}."
        )
    if not _same(mean, want_mean):
        return (
            f"Mean: for {where(case)}, your mean {fmt(mean)} is not the mean over the last "
            f"axis, {fmt(want_mean)}."
        )
    r = _first_gap(var, variances[0])
    shown = var.reshape(want_mean.shape)[r] if var.size == want_mean.size else var
    return (
        f"Variance: for {where(case)}, your variance does not come from each record's own "
        f"features (last axis): record {record(r)} has variance {fmt(variances[0][r])}, "
        f"you returned {fmt(shown)}."
    )


def _first_gap(got: np.ndarray, want: np.ndarray) -> tuple:
    if got.size != want.size or want.ndim == 0:
        return ()
    gap = np.abs(got.reshape(want.shape) - want)
    return tuple(int(i) for i in np.unravel_index(int(np.nanargmax(gap)), gap.shape))


@_each_case
def _judge_stats_variance(case, x, stats, mean, var):
    axes = _mean_axes(stats, x, mean) or (x.ndim - 1,)
    population = stats[axes, 0][1]
    if _same(var, population):
        return None
    n = int(np.prod([x.shape[a] for a in axes]))
    if _same(var, stats[axes, 1][1]):
        return (
            f"Sample variance: for {where(case)}, row_stats divides by n - 1 = {n - 1} "
            f"(np.var(ddof=1), torch.var's default). LayerNorm's variance describes the "
            f"record itself: the population variance divides by n = {n}. For "
            f"[1, 2, 3, 4] that is 1.25, not 5/3."
        )
    r = _first_gap(var, population)
    shown = var.reshape(population.shape)[r] if var.size == population.size else var
    return (
        f"Variance: for {where(case)}, row_stats returned {fmt(shown)} where the population "
        f"variance (mean of squared deviations from the record's mean) is "
        f"{fmt(population[r] if r else population)}."
    )


def _judge_stats_shape(seen):
    want = seen.case.args[0].shape[:-1]
    for name, value in zip(("mean", "var"), seen.value, strict=True):
        if value.shape != want:
            hint = " (drop keepdims=True)" if value.shape == (*want, 1) else ""
            return (
                f"Shape: for {where(seen.case)}, row_stats returned a {name} of shape "
                f"{value.shape}; one value per record is shape x.shape[:-1] = {want}{hint}."
            )
    return None


CHECKS = registry(
    ASSIGNMENT,
    check_spec(
        "stats_axis",
        "row_stats",
        _judge_stats_axis,
        "row_stats: statistics over the last axis",
        misconception="row_stats: statistics over the wrong axes",
        points=2,
        questions=_stats_questions,
    ),
    check_spec(
        "stats_population_variance",
        "row_stats",
        _judge_stats_variance,
        "row_stats: population variance (divide by d, not d - 1)",
        misconception="row_stats: the sample variance (d - 1)",
        points=2,
        questions=_stats_questions,
    ),
    check_spec(
        "stats_shape",
        "row_stats",
        each_case(_read_stats, _judge_stats_shape),
        "row_stats: one value per record, x.shape[:-1]",
        misconception="row_stats: statistics of the wrong shape",
        points=1,
    ),
    normchecks.reuse_spec(
        "stats_reference_reuse",
        "row_stats",
        points=1,
        read=_read_stats,
        summary="row_stats written by hand",
        misconception="row_stats: a library function called",
    ),
    normchecks.axis_spec(LAYER_NORM, points=3),
    normchecks.centering_spec(LAYER_NORM, points=1),
    normchecks.population_variance_spec(LAYER_NORM, points=2),
    normchecks.eps_placement_spec(LAYER_NORM, points=2),
    normchecks.gain_and_bias_spec(LAYER_NORM, points=2),
    normchecks.independence_spec(LAYER_NORM, points=2),
    normchecks.dtype_and_shape_spec(LAYER_NORM, points=1),
    normchecks.input_untouched_spec(LAYER_NORM, points=1),
    normchecks.numerics_spec(LAYER_NORM, points=2),
    normchecks.reference_reuse_spec(LAYER_NORM, points=3),
)
