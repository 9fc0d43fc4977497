"""independence: no record changes another, alone = inside a batch, no state."""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from ..evidence import array_output, where
from ..spec import CheckSpec
from .kind import NormKind, call, messy, norm_spec, rng_for


def independence_spec(kind: NormKind, grade_id: str = "independence") -> CheckSpec:
    """No record influences another, in a batch or across calls (the seed's audit).

    The calls run in this order: a batch, another batch, the first batch again (a
    function with state gives a different answer now), then the batch with one
    record changed, then single records alone. The judge reads "again" first, so a
    function with state is told about its state, not about crossing an axis.
    """

    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        shapes = [(2, 3, 5)] + ([(3, 4, 4)] if hidden else [])
        cases = []
        for block, shape in enumerate(shapes):
            x = messy(rng, shape)
            b, t, d = shape
            cases.append(call(kind, x, tag="base", block=block))
            cases.append(call(kind, messy(rng, shape) * 100.0, tag="other", block=block))
            cases.append(call(kind, x, tag="again", block=block))
            for target in ((0, t - 1), (b - 1, 0)):
                x2 = x.copy()
                x2[target] = x2[target] * 7.0 + 10.0 * np.arange(d)  # not a shift or scale
                cases.append(call(kind, x2, tag="changed", block=block, record=target))
            alone = (b - 1, t - 1)
            cases.append(
                call(kind, x[alone][None, None, :], tag="alone", block=block, record=alone)
            )
            if hidden:
                cases.append(call(kind, x[(0, 0)], tag="alone", block=block, record=(0, 0)))
        return cases

    order = {"base": 0, "other": 1, "again": 2, "changed": 3, "alone": 4}

    def judge(cases, results):
        outputs = []
        for case, result in zip(cases, results, strict=True):
            y, problem = array_output(kind.function, case, result)
            if problem:
                return problem
            outputs.append(y)
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

    summary = "records independent: alone = in a batch, no state"
    return norm_spec(kind, grade_id, make_cases, judge, summary)


def _independence_message(kind: NormKind, case: Case, y, x0, y0) -> str | None:
    if case.tag == "again":
        gap = np.abs(y - y0).max()
        if not gap <= 1e-10:
            return (
                f"Independence: calling {kind.function} again on the same input, after another "
                f"call, gave a different output (by up to {gap:.3g}): your function keeps state "
                f"between calls (running statistics?). {kind.title} has none: training and "
                f"inference compute the same thing."
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
                f"Independence: changing record {target} changed record {other} (by up to "
                f"{moved[other]:.3g}): your statistics cross {axis}. Each record is normalized "
                f"with its own features only."
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
                f"inside its batch (by up to {gap:.3g}): a batch of one must normalize exactly as "
                f"a batch of many."
            )
    return None
