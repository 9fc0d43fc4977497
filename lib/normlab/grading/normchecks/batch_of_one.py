"""batch_of_one (batch-norm): a single record raises ValueError."""

from __future__ import annotations

from ..evidence import failure_of_call, undefined, where
from ..judges import must_raise
from ..spec import CheckSpec
from ..verdict import NOT_WRITTEN, Verdict
from .kind import NormKind, norm_cell


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
