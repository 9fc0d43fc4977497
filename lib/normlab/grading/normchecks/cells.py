"""The cells of a normalization that read no choice of its formula: its own output against
itself (gain and bias, float32 against float64), records independent, a batch of one refused,
the output like the input, the arguments untouched, no library called. `like_the_input_spec`,
`untouched_spec` and `reuse_spec` also serve functions called otherwise (ps7's group norm, ps9,
the gradients)."""

from __future__ import annotations

from functools import partial

import numpy as np

from normlab_sandbox.cases import Case
from normlab_sandbox.tripwire import TRIPWIRE_REMOVED

from ..evidence import (
    amount,
    failure_of_call,
    fmt,
    near,
    record,
    shown_type,
    undefined,
    warned,
    where,
    worst,
)
from ..judges import an_array, each_case, each_pair, must_raise, read_all, returned
from ..spec import CheckSpec, check_spec
from ..verdict import NOT_WRITTEN, Message, Verdict
from .kind import NormKind, norm_cell


def gain_and_bias_spec(
    kind: NormKind, grade_id: str = "gain_and_bias", *, points: float
) -> CheckSpec:
    """gamma (and beta) scale and shift each normalized feature: judged against the student's
    own output with gamma = 1 and beta = 0, so no other misconception can leak in."""

    def rule(seen):
        y1, yg = seen.first, seen.value
        gamma = np.asarray(seen.case.args[1], dtype=np.float64)
        beta = np.asarray(seen.case.args[2], dtype=np.float64) if kind.has_beta else 0.0
        expected = gamma * y1 + beta
        index = worst(yg, expected, 1e-6, 1e-8 * (1.0 + np.abs(expected).max()))
        if index is None:
            return None
        return _affine_message(kind, seen.case, y1, yg, gamma, beta, expected, index)

    return norm_cell(
        gain_and_bias_spec,
        kind,
        grade_id,
        each_pair(an_array, rule),
        "gamma (and beta) per feature, after normalizing",
        misconception=f"{'gamma and beta' if kind.has_beta else 'gamma'} misapplied",
        points=points,
    )


def _affine_message(kind, case, y1, yg, gamma, beta, expected, index) -> str:
    has_beta = kind.has_beta
    params = "gamma and beta" if has_beta else "gamma"
    head = f"Gain{' and bias' if has_beta else ''}: for {where(case)} with gamma = {fmt(gamma)}"
    head += f" and beta = {fmt(beta)}" if has_beta else ""
    close = partial(near, yg, rtol=1e-6, atol=1e-8)  # close(z): is the output z?
    if close(y1):
        why = f"{params} had no effect: the output is the same as with gamma = 1" + (
            ", beta = 0." if has_beta else "."
        )
    elif has_beta and close(beta * y1 + gamma):
        why = "gamma and beta are swapped: beta scales and gamma shifts."
    elif (
        y1.ndim >= 2
        and y1.shape[-2] == y1.shape[-1]
        and close(gamma[:, None] * y1 + (beta[:, None] if has_beta else 0.0))
    ):
        why = (
            f"{params} were applied per record (down the rows), not per feature: on a square "
            "input a (d, 1)-shaped gamma broadcasts the wrong way. gamma[k] scales feature k."
        )
    elif has_beta and close(gamma * y1):
        why = "beta was not added: each feature k gets gamma[k] * x_hat[k] + beta[k]."
    elif has_beta and close(y1 + beta):
        why = "gamma was not applied: each feature k gets gamma[k] * x_hat[k] + beta[k]."
    else:
        why = (
            f"the output is not gamma[k] * x_hat[k]{' + beta[k]' if has_beta else ''} of your "
            "own normalized x_hat (your output with gamma = 1): apply them after normalizing."
        )
    r, k = tuple(index[:-1]), int(index[-1])
    return (
        f"{head}, {why} Record {record(r) if r else 0}, feature {k}: expected "
        f"{fmt(expected[index])}, got {fmt(yg[index])}."
    )


def independence_spec(
    kind: NormKind, grade_id: str = "independence", *, points: float
) -> CheckSpec:
    """No record influences another, in a batch or across calls (the seed's audit).

    The calls run in this order: a batch, another batch, the first batch again (a
    function with state gives a different answer now), then the batch with one
    record changed, then single records alone. The judge reads "again" first, so a
    function with state is told about its state, not about crossing an axis.

    The visible batch has three records per token position: statistics taken across
    a batch of two leak only through eps (two values standardize to -1 and +1
    whatever they are), a change of about 1e-8 that no student can see; across three,
    the changed record moves its neighbours visibly.
    """

    order = {"base": 0, "other": 1, "again": 2, "changed": 3, "alone": 4}

    def judge(cases, results, oracle):
        outputs, problem = read_all(an_array, cases, results)
        if problem:
            return problem
        read = list(zip(cases, outputs, strict=True))
        base = {c.meta["block"]: (np.asarray(c.args[0]), y) for c, y in read if c.tag == "base"}
        for case, y in sorted(read, key=lambda pair: order[pair[0].tag]):  # stable: in order
            message = _independence_message(kind, case, y, *base[case.meta["block"]])
            if message:
                return message
        return None

    return norm_cell(
        independence_spec,
        kind,
        grade_id,
        judge,
        "records independent: alone = in a batch, no state",
        misconception="records influence each other, or state kept between calls",
        points=points,
    )


def _independence_message(kind: NormKind, case: Case, y, x0, y0) -> str | None:
    if case.tag == "again":
        gap = np.abs(y - y0).max()
        if not gap <= 1e-10:
            return (
                f"Independence: calling {kind.function} again on the same input, after another "
                f"call, gave a different output (by up to {amount(gap)}): your function keeps "
                f"state between calls (running statistics?). {kind.title} has none: training "
                f"and inference compute the same thing."
            )
    elif case.tag == "changed":
        target = case.meta["record"]
        moved = np.abs(y - y0).max(axis=-1)  # (B, T)
        own = moved[target]
        moved[target] = 0.0
        if moved.max() > 1e-10:
            across = moved.copy()
            across[target[0]] = 0.0
            pick = across if across.max() > 1e-10 else moved
            other = tuple(int(i) for i in np.unravel_index(np.argmax(pick), pick.shape))
            axis = "the batch axis" if other[0] != target[0] else "the token axis"
            return (
                f"Independence: changing record {target} of a {x0.shape} input changed record "
                f"{other}, from {fmt(y0[other])} to {fmt(y[other])} (by up to "
                f"{amount(moved[other])}): your statistics cross {axis}. Each record is "
                f"normalized with its own features only."
            )
        if not own > 1e-6:
            return (
                f"Independence: changing record {target} of a {x0.shape} input did not change "
                f"its own output: {kind.function} ignores its input there."
            )
    elif case.tag == "alone":
        r = case.meta["record"]
        gap = np.abs(y.reshape(-1) - y0[r]).max()
        if not gap <= 1e-10:
            return (
                f"Independence: record {r} alone ({where(case)}) gives a different output than "
                f"inside its batch (by up to {amount(gap)}): a batch of one must normalize "
                f"exactly as a batch of many."
            )
    return None


def numerics_spec(kind: NormKind, grade_id: str = "numerics", *, points: float) -> CheckSpec:
    """float32 far from zero: the student's own float64 answer on the same numbers is the yardstick.

    The records sit at an offset of 1e4 with a spread of about 1. The student's
    function, given the very same values in float64, computes its own answer
    accurately; in float32 a one-pass E[x^2] - E[x]^2 variance cancels (about 1e8
    minus 1e8, where float32 resolves steps of 8) and the two answers part.
    Comparing a function with itself keeps every other misconception out.
    """

    def rule(seen):
        y64, y32 = seen.first, seen.value
        index = worst(y32, y64, 0.0, 2e-2 * (1 + np.abs(y64).max()))
        if index is None:
            return None
        r = tuple(index[:-1])
        return (
            f"Numerics: for {where(seen.case)}, record {record(r)} gives {fmt(y32[r])}, but "
            f"your own function on the same numbers in float64 gives {fmt(y64[r])}"
            f"{warned(seen.result)}. Far from zero, E[x^2] - E[x]^2 subtracts two huge, "
            f"nearly equal numbers and the variance cancels (it can even turn negative): "
            f"subtract the mean first, then average the squares (two passes)."
        )

    return norm_cell(
        numerics_spec,
        kind,
        grade_id,
        each_pair(an_array, rule),
        "float32 records far from zero (no cancellation)",
        misconception="the variance cancels in float32 far from zero",
        points=points,
    )


def refuses_one_record(function: str, title: str, why: str, sep: str = " "):
    """The rule of a cell whose batch of one record must raise ValueError (batch-norm in
    training): `title` opens its messages, `why` says why returning an output is wrong, and
    `sep` follows the input's description."""

    def rule(seen):
        case, error = seen.case, seen.value
        if case.tag == "two" or (error and error[0] == "NotImplementedError"):
            return failure_of_call(function, case, seen.result)
        if error is None:
            return f"{title}: for {where(case)}{sep}{function} returned an output. {why}"
        if error[0] != "ValueError":
            message = (
                f"{title}: for {where(case)}{sep}{function} raised {error[0]} "
                f"({error[1]}); raise ValueError saying the batch is too small."
            )
            return Verdict(NOT_WRITTEN, message) if undefined(case, seen.result) else message
        return None

    return rule


def batch_of_one_spec(
    kind: NormKind, grade_id: str = "batch_of_one", *, points: float
) -> CheckSpec:
    why = (
        "One record per feature has nothing to average over: every output would be beta. "
        "Batch-norm needs a crowd; raise ValueError with a message."
    )
    return norm_cell(
        batch_of_one_spec,
        kind,
        grade_id,
        must_raise(refuses_one_record(kind.function, "Batch of one", why)),
        "a single record raises ValueError (batch-norm needs a crowd)",
        misconception="a batch of one normalized instead of refused",
        points=points,
    )


def like_the_input(seen):
    """Rule: the output is a NumPy array of the input's (the first argument's) shape and dtype."""
    case, y, x = seen.case, seen.value, seen.case.args[0]
    if seen.result.output_type != "numpy.ndarray":
        return (
            f"Type: for {where(case)}, {case.target} returned {shown_type(seen.result)}, "
            f"not a NumPy array."
        )
    if y.shape != x.shape:
        return (
            f"Shape: for {where(case)}, {case.target} returned shape {y.shape}; the "
            f"output has the input's shape {x.shape} (keepdims=True keeps the "
            f"statistics broadcastable)."
        )
    if y.dtype != x.dtype:
        return (
            f"dtype: for {where(case)}, {case.target} returned {y.dtype}; a {x.dtype} "
            f"input gives a {x.dtype} output (compute in float64 if you like, then "
            f"cast back with .astype(x.dtype))."
        )
    return None


def like_the_input_spec(grade_id: str, function: str, *, points: float, **fields) -> CheckSpec:
    """The cell of `function` whose output must be like its input (`like_the_input`)."""
    return check_spec(
        grade_id,
        function,
        each_case(returned, like_the_input),
        "returns an array of the input's shape and dtype",
        misconception="the output's type, shape or dtype wrong",
        points=points,
        **fields,
    )


def dtype_and_shape_spec(
    kind: NormKind, grade_id: str = "dtype_and_shape", *, points: float
) -> CheckSpec:
    builder = {"builder": dtype_and_shape_spec, "kind": kind}
    return like_the_input_spec(grade_id, kind.function, points=points, **builder)


IN_PLACE = (
    ". In-place updates such as `{name} -= ...` change the caller's array; compute into a new "
    "array instead."
)


def untouched_spec(
    grade_id: str,
    function: str,
    names: tuple[str, ...],
    *,
    advice: str = IN_PLACE,
    summary: str = "does not write into its arguments",
    **fields,
) -> CheckSpec:
    """The cell of `function` whose call must write into none of its array arguments, `names`
    (`Result.modified_inputs`); the message ends with `advice` (formatted with the argument's
    name)."""

    def rule(seen):
        if not seen.result.modified_inputs:
            return None
        key = seen.result.modified_inputs[0]
        name = names[key] if isinstance(key, int) else key
        return (
            f"Input modified: {seen.case.target} wrote into its argument {name} "
            f"({where(seen.case)}){advice.format(name=name)}"
        )

    fields["misconception"] = "writes into its arguments"
    return check_spec(grade_id, function, each_case(returned, rule), summary, **fields)


def input_untouched_spec(
    kind: NormKind, grade_id: str = "input_untouched", *, points: float
) -> CheckSpec:
    names, builder = kind.param_names, input_untouched_spec
    return untouched_spec(grade_id, kind.function, names, points=points, builder=builder, kind=kind)


LIBRARY_PREFIXES = ("normlab.", "torch.")
# how every message of a function handing its work to a library begins (`session` reads it)
REUSE = "Reference reuse:"


def reuse_message(function: str, calls, library: str) -> Message | None:
    """The message when a call reached a library normalization, else None; its cause is what
    the function hands its work to (`session.Session.judge` adds what the reuse policy costs)."""
    if TRIPWIRE_REMOVED in calls:
        return Message(
            f"{REUSE} {function} removed the grader's profile hook (sys.setprofile), "
            f"so the grader cannot see what it calls.",
            cause="a library (it removed the grader's profile hook)",
        )
    hits = [c for c in calls if c.startswith(LIBRARY_PREFIXES)]
    if not hits:
        return None
    hint = "write the computation yourself with NumPy"
    return Message(f"{REUSE} {function} called {hits[0]}, {library}: {hint}.", cause=hits[0])


def no_reuse(read, library: str = "a library implementation"):
    """Reader of a reuse cell: the tripwire's report first, then `read`'s problem if any
    (a function that reaches a library is told so even when the call then fails). A call it
    made only through another of the student's graded functions is that function's reuse,
    not this one's (`Result.delegated`)."""

    def read_calls(case, result):
        message = reuse_message(case.target, result.reference_calls, library)
        return (None, message) if message else read(case, result)

    return read_calls


def reuse_spec(
    grade_id: str,
    function: str,
    *,
    points: float,
    read=returned,
    library: str = "a library implementation",
    summary: str = "written by hand: no library normalization called",
    misconception: str = "a library normalization called",
    **fields,
) -> CheckSpec:
    """The reuse cell of `function` (`voids`: under the course's policy its finding costs the
    function's other cells too): the tripwire's report of a library call, then `read`'s problem
    if any; `library` names what the function must not call."""
    judge = each_case(no_reuse(read, library))
    fields |= {"misconception": misconception, "points": points, "voids": True}
    return check_spec(grade_id, function, judge, summary, **fields)


def reference_reuse_spec(
    kind: NormKind, grade_id: str = "reference_reuse", *, points: float
) -> CheckSpec:
    return reuse_spec(
        grade_id, kind.function, points=points, builder=reference_reuse_spec, kind=kind
    )
