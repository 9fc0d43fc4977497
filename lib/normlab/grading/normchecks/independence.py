"""independence: no record changes another, alone = inside a batch, no state."""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from ..evidence import amount, fmt, where
from ..judges import an_array, read_all
from ..spec import CheckSpec
from .kind import NormKind, norm_cell


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
        base = {
            c.meta["block"]: (np.asarray(c.args[0]), y)
            for c, y in zip(cases, outputs, strict=True)
            if c.tag == "base"
        }
        for rank in range(2, 5):
            for case, y in zip(cases, outputs, strict=True):
                if order[case.tag] == rank:
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
