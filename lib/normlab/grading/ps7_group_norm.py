"""ps7's group norm cells: the student writes `group_norm(x, num_groups, gamma, beta, eps=1e-5)`.

Group norm (Wu and He, 2018, arXiv:1803.08494, eq. (1)-(3)) standardizes each sample's C
channels in G = num_groups contiguous groups, each over its channels and every position (the
population variance, eps inside the root), then applies a per-channel gain and bias; input
(N, C, *spatial) as `torch.nn.functional.group_norm`. Each cell reads one choice from the
student's own output, so one bug costs one cell:

- the grouping: with gamma = 1 and beta = 0 the output is, on each set of entries that share
  statistics, the input minus one mean over one positive number; `sharing_of` finds the
  partition on which that holds (contiguous, single channels, strided, the last axis, whole
  samples), whatever the divisor, eps and the gain;
- the divisor: each set's variance against the right normalization over the student's own
  grouping (the oracle's);
- gamma and beta: the output against the student's own with gamma = 1 and beta = 0;
- eps: (x - mu) / sqrt(var + eps) does not move when x is scaled by k and eps by k^2,
  whatever the grouping and the divisor; a group of zero variance must give a finite output.

Every input of rank 3 or more has its last axis of length C, so a function that reads its
channels from the last axis runs and only the channel-axis cell tells. No message gives an
expected output.
"""

from __future__ import annotations

import re
from functools import partial

import numpy as np

from normlab_sandbox.cases import Case

from . import normchecks
from .evidence import failure_of_call, first_index, fmt, near, undefined, where, worst
from .judges import an_array, each_case, each_pair, must_raise
from .oracle import ASK, ask
from .spec import check_spec
from .verdict import NOT_WRITTEN, Verdict

FUNCTION = "group_norm"
PARAMS = ("x", "num_groups", "gamma", "beta", "eps")
DEFAULT_EPS = 1e-5

# ps7's wrong group norms the oracle knows (`oracle.wrong`, answer_key.wrong_implementations)
WRONG = (
    "strided_groups",
    "instance_norm",
    "layer_norm_over_channels",
    "sample_variance",
    "affine_before_normalizing",
    "eps_outside_the_root",
    "channels_from_the_last_axis",
)

# the ways of sharing statistics the judges tell apart, in the order they are tried
CONTIGUOUS = "contiguous groups"
INSTANCE = "single channels"
STRIDED = "strided groups"
LAST_AXIS = "groups of the last axis"
LAYER = "whole samples"


_close = partial(near, rtol=1e-6, atol=1e-8)


def _sets(a: np.ndarray, groups: int, sharing: str) -> np.ndarray:
    """The entries of `a` (N, C, *spatial) that share statistics under `sharing`, one row per
    set: (sets, entries per set)."""
    n, c = a.shape[:2]
    if sharing == CONTIGUOUS:  # channel c in group c // (C / G)
        return a.reshape(n * groups, -1)
    if sharing == INSTANCE:
        return a.reshape(n * c, -1)
    if sharing == STRIDED:  # channel c in group c % G
        return a.reshape(n, c // groups, groups, -1).swapaxes(1, 2).reshape(n * groups, -1)
    if sharing == LAST_AXIS:  # the last axis read as the channels
        return np.moveaxis(a, -1, 1).reshape(n * groups, -1)
    return a.reshape(n, -1)


def _standardized(case: Case, y: np.ndarray, sharing: str) -> tuple[np.ndarray, np.ndarray]:
    """For each set of entries that share statistics under `sharing`: (is y there the input
    times one positive number plus one constant, is its mean 0)? Both: the set standardized."""
    groups = case.args[1]
    tol = 1e-4 if case.args[0].dtype == np.float32 else 1e-7
    xs = _sets(np.asarray(case.args[0], dtype=np.float64), groups, sharing)
    ys = _sets(y, groups, sharing)
    size = tol * (1.0 + np.abs(ys).max())
    xc = xs - xs.mean(axis=1, keepdims=True)
    yc = ys - ys.mean(axis=1, keepdims=True)
    spread = (xc * xc).sum(axis=1)
    slope = (xc * yc).sum(axis=1) / np.where(spread > 0, spread, 1.0)
    residual = np.abs(yc - slope[:, None] * xc).max(axis=1)
    affine = (residual <= size) & ((slope > 0) | (spread == 0))
    return affine, np.abs(ys.mean(axis=1)) <= size


def sharing_of(case: Case, y: np.ndarray) -> str | None:
    """The first way of sharing statistics, in the order tried, on whose every set y (gamma =
    1, beta = 0) is standardized."""
    shape, groups = case.args[0].shape, case.args[1]
    last = [LAST_AXIS] if len(shape) > 2 and shape[-1] % groups == 0 else []
    for sharing in (CONTIGUOUS, INSTANCE, STRIDED, *last, LAYER):
        affine, centred = _standardized(case, y, sharing)
        if affine.all() and centred.all():
            return sharing
    return None


def _first_bad_group(case: Case, y: np.ndarray) -> str:
    """Where and how the output fails to be standardized on a contiguous group."""
    groups, per = case.args[1], case.args[0].shape[1] // case.args[1]
    affine, centred = _standardized(case, y, CONTIGUOUS)
    row = int(np.argmin(affine & centred))
    n, g = divmod(row, groups)
    how = (
        f"its mean is {fmt(_sets(y, groups, CONTIGUOUS)[row].mean())}, not 0"
        if affine[row]
        else "it is not the group's values minus one mean, divided by one positive number"
    )
    return f"group {g} of sample {n} (channels {g * per} to {(g + 1) * per - 1}): {how}"


def _contiguous(seen):
    case, y = seen.case, seen.value
    sharing = sharing_of(case, y)
    groups, c = case.args[1], case.args[0].shape[1]
    if sharing == STRIDED:
        return (
            f"Strided groups: for {where(case)}, your {FUNCTION} gives channels "
            f"{', '.join(str(k) for k in range(0, c, groups))} one mean and one variance: "
            f"channel c in group c % {groups}. "
            f"Group norm's groups are contiguous blocks of C / num_groups = {c // groups} "
            f"neighbouring channels, as in torch.nn.functional.group_norm."
        )
    if sharing is None:
        return (
            f"Groups: for {where(case)} with gamma = 1 and beta = 0, your output is not each "
            f"group standardized over its channels and positions; {_first_bad_group(case, y)}."
        )
    return None


def _instance(seen):
    case = seen.case
    groups, c = case.args[1], case.args[0].shape[1]
    if groups < c and sharing_of(case, seen.value) == INSTANCE:
        return (
            f"Instance norm: for {where(case)}, each channel of your output is standardized "
            f"on its own, over its positions only: that is group norm with num_groups = C = "
            f"{c}. With num_groups = {groups}, the {c // groups} channels of a group share "
            f"one mean and one variance, taken over all of them and every position."
        )
    return None


def _layer(seen):
    case = seen.case
    groups, c = case.args[1], case.args[0].shape[1]
    if groups > 1 and sharing_of(case, seen.value) == LAYER:
        return (
            f"Layer norm: for {where(case)}, your output standardizes all {c} channels of a "
            f"sample together, as with num_groups = 1: num_groups = {groups} is not used. "
            f"Each of the {groups} groups of channels has its own mean and variance."
        )
    return None


def _implementation_questions(case: Case) -> list:
    """The reference over each grouping a student's output can have (the case's first), then
    every wrong one."""
    x, groups, gamma, beta = case.args[:4]
    eps = case.meta["eps"]
    counts = dict.fromkeys((groups, x.shape[1], 1))
    asked = [ASK.reference(FUNCTION, x, k, gamma, beta, eps=eps) for k in counts]
    return asked + [ASK.wrong(name, x, groups, gamma, beta, eps) for name in WRONG]


def implementation(seen) -> str | None:
    """Which implementation the output is (to 1e-6): "right" (the reference), one of
    `WRONG` (`oracle.wrong`), or None; the channels-last one only where it is defined."""
    x, asked = seen.case.args[0], _implementation_questions(seen.case)
    named = {"right": asked[0], **dict(zip(WRONG, asked[-len(WRONG) :], strict=True))}
    if x.shape[-1] != x.shape[1]:
        del named["channels_from_the_last_axis"]
    return next((n for n, q in named.items() if _close(seen.value, ask(seen.oracle, q))), None)


def _sample_variance(case: Case, m: int) -> str:
    return (
        f"Sample variance: for {where(case)}, your {FUNCTION} divides each group's sum of "
        f"squares by m - 1 = {m - 1} (np.var(ddof=1), torch.var's default). Group norm uses "
        f"the population variance: the mean of the squared deviations of the group's m = {m} "
        f"values."
    )


def _population_variance(seen):
    """A known implementation, or else each set's variance on the student's own grouping is
    the right one's to 1e-3 (eps outside the root moves it less, n - 1 by 1/m >= 1/32 here)."""
    case, y = seen.case, seen.value
    groups = case.args[1]
    known = implementation(seen)
    if known == "sample_variance":
        return _sample_variance(case, _sets(y, groups, CONTIGUOUS).shape[1])
    if known is not None:
        return None  # the reference, or another cell's misconception
    sharing = sharing_of(case, y) or CONTIGUOUS
    x, _, gamma, beta = case.args[:4]  # the right normalization over the student's sharing
    eps = case.meta["eps"]
    if sharing in (STRIDED, LAST_AXIS):
        name = "strided_groups" if sharing == STRIDED else "channels_from_the_last_axis"
        z = seen.oracle.wrong(name, x, groups, gamma, beta, eps)
    else:
        count = {CONTIGUOUS: groups, INSTANCE: x.shape[1], LAYER: 1}[sharing]
        z = seen.oracle.reference(FUNCTION, x, count, gamma, beta, eps=eps)
    ys, zs = _sets(y, groups, sharing), _sets(np.asarray(z, dtype=np.float64), groups, sharing)
    spread = zs.var(axis=1)
    ratio = np.where(spread > 0, ys.var(axis=1) / np.where(spread > 0, spread, 1.0), 1.0)
    if np.all(np.abs(ratio - 1.0) <= 1e-3):
        return None
    m = ys.shape[1]
    if m > 1 and np.all(np.abs(ratio - (m - 1) / m) <= 1e-3):
        return _sample_variance(case, m)
    row = int(np.argmax(np.abs(ratio - 1.0)))
    return (
        f"Scale: for {where(case)}, your output is not divided by the square root of each "
        f"group's population variance plus eps: on set {row} of its {sharing} (m = {m} "
        f"values), it has variance {fmt(ys[row].var())}."
    )


def _per_channel(case: Case, y1: np.ndarray) -> np.ndarray:
    """gamma_c * y1 + beta_c, the parameters broadcast over the positions of channel c."""
    x, _, gamma, beta = case.args[:4]
    shape = (x.shape[1],) + (1,) * (x.ndim - 2)
    return np.reshape(gamma, shape) * y1 + np.reshape(beta, shape)


def _on_last_axis(case: Case, y1: np.ndarray, y: np.ndarray) -> bool:
    """Is y gamma * y1 + beta broadcast along the last axis (where it has length C)?"""
    x, _, gamma, beta = case.args[:4]
    return x.ndim > 2 and x.shape[-1] == x.shape[1] and _close(y, gamma * y1 + beta)


def _gain_and_bias(seen):
    case, y1, y = seen.case, seen.first, seen.value
    if _close(y, _per_channel(case, y1)) or _on_last_axis(case, y1, y):
        return None  # right, or on the last axis: the channel-axis cell's misconception
    gamma, beta = case.args[2:4]
    head = f"Gain and bias: for {where(case)} with gamma = {fmt(gamma)} and beta = {fmt(beta)}"
    before = seen.oracle.wrong("affine_before_normalizing", *case.args[:4], case.meta["eps"])
    if _close(y, before):
        return (
            f"{head}, your {FUNCTION} applies them to x before normalizing, and normalizing "
            f"then undoes most of what they do. They act on the normalized output: channel c "
            f"of every sample is scaled by gamma[c] and shifted by beta[c]."
        )
    if _close(y, y1):
        return (
            f"{head}, your output is the same as with gamma = 1 and beta = 0: they had no effect."
        )
    return (
        f"{head}, your output is not gamma[c] * x_hat + beta[c] of your own normalized x_hat "
        f"(your output with gamma = 1 and beta = 0), channel by channel."
    )


def _channel_axis(seen):
    case, y1, y = seen.case, seen.first, seen.value
    x, groups = case.args[:2]
    if sharing_of(case, y1) == LAST_AXIS:
        return (
            f"Channels from the last axis: for {where(case)}, your {FUNCTION} groups the "
            f"{x.shape[-1]} entries of the last axis as channels. The input is (N, C, "
            f"*spatial), channels on axis 1, as torch.nn.functional.group_norm takes it: "
            f"here C = {x.shape[1]}."
        )
    if _on_last_axis(case, y1, y) and not _close(y, _per_channel(case, y1)):
        return (
            f"Channels from the last axis: for {where(case)}, your {FUNCTION} applies gamma "
            f"and beta along the last axis, one per position. They are per channel, axis 1 of "
            f"(N, C, *spatial): gamma[c] scales channel c at every position."
        )
    return None


SCALE = 10.0  # x times SCALE, eps times SCALE^2: (x - mu) / sqrt(var + eps) does not move


def _eps(seen):
    case, y1, y = seen.case, seen.first, seen.value
    for output, shown in ((y1, case.meta["first"]), (y, where(case))):
        if not np.all(np.isfinite(output)):
            index = first_index(~np.isfinite(output))
            return (
                f"eps: for {shown}, your output has {output[index]} at {index}: a group of zero "
                f"variance must give beta, and eps inside the square root keeps the division "
                f"finite."
            )
    index = worst(y, y1, 1e-6, 1e-9 * (1.0 + np.abs(y1).max()))
    if index is None:
        return None
    if _close(y, seen.oracle.wrong("eps_outside_the_root", *case.args)):
        return (
            f"eps outside the square root: for {case.meta['first']}, your {FUNCTION} divides by "
            f"sqrt(var) + eps. The paper adds eps to the variance, inside the root; the two "
            f"differ on groups of small variance."
        )
    return (
        f"eps: scaling x by {SCALE:g} and eps by {SCALE**2:g} changed your output (for "
        f"{case.meta['first']}, then {where(case)}: at {tuple(int(i) for i in index)}, "
        f"{fmt(y1[index])} became {fmt(y[index])}). With eps added to the variance inside the "
        f"square root nothing moves: is eps outside the root, or the eps argument not used?"
    )


def _names(text: str, number: int) -> bool:
    return re.search(rf"(?<![\d.]){number}(?![\d.])", text) is not None


def _indivisible(seen):
    case, error = seen.case, seen.value
    if case.tag == "divisible" or (error and error[0] == "NotImplementedError"):
        return failure_of_call(FUNCTION, case, seen.result)
    c, groups = case.args[0].shape[1], case.args[1]
    head = f"num_groups must divide C: for {where(case)}, C = {c} channels"
    if error is None:
        return (
            f"{head} do not split into {groups} equal groups, yet your {FUNCTION} returned an "
            f"output (a wrong number where an error belongs). Raise ValueError saying so."
        )
    if error[0] != "ValueError":
        message = f"{head}: your {FUNCTION} raised {error[0]} ({error[1]}); raise ValueError."
        return Verdict(NOT_WRITTEN, message) if undefined(case, seen.result) else message
    if not (_names(error[1], c) and _names(error[1], groups)):
        return (
            f"{head}: your ValueError says {error[1]!r}. Name the numbers that do not fit, "
            f"C = {c} and num_groups = {groups}, so the caller sees what is wrong."
        )
    return None


SPECS = (
    check_spec(
        "gn_contiguous_groups",
        FUNCTION,
        each_case(an_array, _contiguous),
        "groups of C / num_groups contiguous channels",
        misconception="strided groups (channel c in group c % G)",
        points=2,
    ),
    check_spec(
        "gn_instance_norm",
        FUNCTION,
        each_case(an_array, _instance),
        "a group's channels share statistics (not instance norm)",
        misconception="statistics over each channel alone (instance norm)",
        points=1,
    ),
    check_spec(
        "gn_layer_norm",
        FUNCTION,
        each_case(an_array, _layer),
        "each group has its own statistics (not layer norm)",
        misconception="statistics over every channel (layer norm)",
        points=1,
    ),
    check_spec(
        "gn_population_variance",
        FUNCTION,
        each_case(an_array, _population_variance),
        "population variance of each group",
        misconception="the sample variance (m - 1)",
        points=1,
        questions=_implementation_questions,
    ),
    check_spec(
        "gn_gain_and_bias",
        FUNCTION,
        each_pair(an_array, _gain_and_bias),
        "gamma and beta per channel, after normalizing",
        misconception="gamma and beta applied before normalizing",
        points=1,
        questions=lambda case: [
            ASK.wrong("affine_before_normalizing", *case.args[:4], case.meta["eps"])
        ],
    ),
    check_spec(
        "gn_eps_placement",
        FUNCTION,
        each_pair(an_array, _eps),
        "eps inside the square root, the argument used",
        misconception="eps outside the square root, or ignored",
        points=1,
        questions=lambda case: (
            [ASK.wrong("eps_outside_the_root", *case.args)] if len(case.args) == 5 else []
        ),
    ),
    check_spec(
        "gn_channel_axis",
        FUNCTION,
        each_pair(an_array, _channel_axis),
        "channels on axis 1, gamma and beta per channel",
        misconception="channels taken from the last axis",
        points=1,
    ),
    check_spec(
        "gn_indivisible_groups",
        FUNCTION,
        must_raise(_indivisible),
        "ValueError naming C and num_groups when num_groups does not divide C",
        misconception="num_groups that does not divide C accepted",
        points=1,
    ),
    normchecks.like_the_input_spec("gn_dtype_and_shape", FUNCTION, points=1),
    normchecks.untouched_spec("gn_input_untouched", FUNCTION, PARAMS, points=1),
    normchecks.reuse_spec(
        "gn_reference_reuse",
        FUNCTION,
        points=2,
        library="a library group norm",
        misconception="a library group norm called",
    ),
)
