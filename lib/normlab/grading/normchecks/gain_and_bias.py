"""gain_and_bias: gamma (and beta) per feature, applied after normalizing."""

from __future__ import annotations

import numpy as np

from ..evidence import fmt, near, record, where, worst
from ..judges import an_array, each_pair
from ..spec import CheckSpec
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
        scale = 1.0 + np.abs(expected).max()
        index = worst(yg, expected, 1e-6, 1e-8 * scale)
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

    def close(z) -> bool:
        return near(yg, z, 1e-6, 1e-8)

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
    r = tuple(index[:-1])
    k = int(index[-1])
    return (
        f"{head}, {why} Record {record(r) if r else 0}, feature {k}: expected "
        f"{fmt(expected[index])}, got {fmt(yg[index])}."
    )
