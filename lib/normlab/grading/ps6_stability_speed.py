"""ps6_stability_speed: a stable variance, a fair timer, and one written answer.

- `stable_variance(x)`: each record's population variance (Ba, Kiros and Hinton, 2016,
  arXiv:1607.06450), accurate for float32 records far from zero, where the one-pass
  E[x^2] - E[x]^2 cancels (the numerics chapter);
- `time_median(fn, repeats=7, warmup=2, clock=time.perf_counter)`: the median seconds of the
  timed calls after the untimed warm-up, graded on a fake clock (`scripted_timer`);
- `decode_one_token`: graded by hand (`MANUAL`; the rubric is in the source notebook).
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from . import normchecks
from .evidence import failure_of_call, first_beyond, first_index, fmt, record, shown_type, where
from .judges import each_case, each_pair, returned
from .normchecks.cells import REUSE
from .oracle import ASK
from .spec import check_spec, registry
from .verdict import Message

ASSIGNMENT = "ps6_stability_speed"
MANUAL = {"decode_one_token": 5}


def _read_variance(case: Case, result) -> tuple[np.ndarray | None, str | None]:
    """Reader: one variance per record, as float64, or the message."""
    problem = failure_of_call("stable_variance", case, result)
    if problem:
        return None, problem
    if isinstance(result.output, tuple) or result.output is None:
        return None, f"stable_variance returned {shown_type(result)}, not an array."
    out = np.asarray(result.output, dtype=np.float64)
    want = case.args[0].shape[:-1]
    if out.size != int(np.prod(want)):
        return None, (
            f"stable_variance returned shape {out.shape} for {where(case)}; one variance per "
            f"record is shape {want}."
        )
    return out.reshape(want), None


def _far(seen):
    case32, v64, v32 = seen.case, seen.first, seen.value
    with np.errstate(invalid="ignore"):
        r = first_beyond(v32 - v64, 1e-3 * np.abs(v64) + 1e-3)
    if r is None:
        return None
    return (
        f"Cancellation: for {where(case32)}, record {record(r)} gets variance "
        f"{fmt(v32[r])} in float32 but {fmt(v64[r])} from your own function on the same "
        f"numbers in float64. E[x^2] - E[x]^2 subtracts two numbers near 1e8 that "
        f"float32 resolves only to steps of 8: subtract the mean (or any member of the "
        f"record) first, then average the squares."
    )


def _population(seen):
    case, got, x = seen.case, seen.value, seen.case.args[0]
    stats = seen.oracle.statistics(x)
    want = stats[(x.ndim - 1,), 0][1]
    if np.allclose(got, want, rtol=1e-6, atol=0):
        return None
    d = x.shape[-1]
    if np.allclose(got, stats[(x.ndim - 1,), 1][1], rtol=1e-6, atol=0):
        return (
            f"Sample variance: for {where(case)}, stable_variance divides by d - 1 = {d - 1}; "
            f"LayerNorm's variance is the population variance, divide by d = {d}."
        )
    r = first_index(~np.isclose(got, want, rtol=1e-6, atol=0))
    return (
        f"Variance: for {where(case)}, record {record(r)} gets {fmt(got[r])}; its "
        f"population variance (over the last axis) is {fmt(want[r])}."
    )


def _dtype(seen):
    case, out, result, x = seen.case, seen.value, seen.result, seen.case.args[0]
    if result.output_type != "numpy.ndarray" and not result.output_type.startswith("numpy.float"):
        return f"stable_variance returned {shown_type(result)}, not a NumPy array."
    out = np.asarray(out)
    if out.shape != x.shape[:-1]:
        return (
            f"Shape: for {where(case)}, stable_variance returned shape {out.shape}; one "
            f"variance per record is shape x.shape[:-1] = {x.shape[:-1]}."
        )
    if out.dtype != x.dtype:
        return (
            f"dtype: for {where(case)}, stable_variance returned {out.dtype}; a {x.dtype} "
            f"input gives a {x.dtype} variance (cast back if you compute in float64)."
        )
    return None


def _read_by_hand(case, result):
    """Reader of the by-hand cell: NumPy's variance is off limits too, then as any reuse cell."""
    hits = [c for c in result.reference_calls if c.startswith(("numpy.", "normlab."))]
    if hits:
        text = (
            f"{REUSE} stable_variance called {hits[0]}: this exercise is to write the variance "
            f"from sums and means yourself (np.var already does two passes)."
        )
        return None, Message(text, cause=hits[0])
    return normchecks.no_reuse(_read_variance)(case, result)


def _read_seconds(case, result) -> tuple[float | None, str | None]:
    """Reader: the seconds time_median returned, timed with the clock it was given."""
    problem = failure_of_call("time_median", case, result)
    if problem:
        return None, problem
    try:
        seconds = float(np.asarray(result.output).reshape(()))
    except (TypeError, ValueError):
        return None, (
            f"time_median should return a number of seconds; it returned {shown_type(result)}."
        )
    if result.probe("clock_reads", 0) == 0:
        return None, (
            f"time_median never read the clock it was given ({where(case)}): time with "
            f"`clock()` (the argument), not time.perf_counter directly, so it can be tested."
        )
    return seconds, None


def _warmup(seen):
    case, got = seen.case, seen.value
    calls = seen.result.probe("calls", 0)
    if calls != case.meta["calls"]:
        return (
            f"Warm-up: for {where(case)}, fn ran {calls} times; it should run warmup + "
            f"repeats = {case.meta['calls']} times (warm-up runs first, untimed)."
        )
    if abs(got - case.meta["want"]) <= 1e-9:
        return None
    durations = case.kwargs["clock"].params
    timed = durations[case.kwargs.get("warmup", 2) :]
    if abs(got - float(np.mean(timed))) <= 1e-9:
        return (
            f"Warm-up: for {where(case)}, time_median returned {got:g} s, the mean of the "
            f"timed runs: the warm-up stays out, but this cell reads the median of what is "
            f"timed, so take the median."
        )
    return (
        f"Warm-up: for {where(case)}, time_median returned {got:g} s: the warm-up runs "
        f"(the first, slow ones) must run before the timed ones, untimed, and stay out of "
        f"the median."
    )


def _median(seen):
    case, got = seen.case, seen.value
    if abs(got - case.meta["want"]) <= 1e-9:
        return None
    durations = case.kwargs["clock"].params
    timed = np.array(durations[len(durations) - case.kwargs.get("repeats", 7) :])
    if abs(got - timed.mean()) <= 1e-9:
        why = f"that is the mean; one slow run ({timed.max():g} s) drags it: take the median"
    elif abs(got - timed.min()) <= 1e-9:
        why = "that is the fastest run; the exercise asks for the median"
    elif len(timed) % 2 == 0:
        why = "for an even number of runs the median is the mean of the two middle values"
    else:
        why = "the median is the middle value of the sorted timed runs"
    return f"Median: for {where(case)}, time_median returned {got:g} s; {why}."


CHECKS = registry(
    ASSIGNMENT,
    check_spec(
        "far_from_zero",
        "stable_variance",
        each_pair(_read_variance, _far),
        "no cancellation",
        misconception="the variance cancels far from zero",
        points=3,
    ),
    check_spec(
        "variance_population",
        "stable_variance",
        each_case(_read_variance, _population),
        "population variance (divide by d)",
        misconception="not the population variance (d - 1?)",
        salt="population_variance",
        points=2,
        questions=lambda case: [ASK.statistics(case.args[0])],
    ),
    check_spec(
        "variance_dtype_and_shape",
        "stable_variance",
        each_case(returned, _dtype),
        "one variance per record, the input's dtype",
        misconception="the variance of the wrong type, shape or dtype",
        points=1,
    ),
    check_spec(
        "variance_by_hand",
        "stable_variance",
        each_case(_read_by_hand),
        "written from sums and means, not np.var",
        misconception="np.var or a library called",
        salt="population_variance",
        points=1,
        voids=True,
    ),
    check_spec(
        "timing_warmup",
        "time_median",
        each_case(_read_seconds, _warmup),
        "warm-up untimed",
        misconception="the warm-up runs timed, or too many or few runs",
        points=3,
    ),
    check_spec(
        "timing_median",
        "time_median",
        each_case(_read_seconds, _median),
        "median, not mean",
        misconception="the mean (or another statistic), not the median",
        points=3,
    ),
)
