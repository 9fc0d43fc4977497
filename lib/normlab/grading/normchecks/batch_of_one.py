"""batch_of_one (batch-norm): a single record raises ValueError."""

from __future__ import annotations

from ..evidence import failure_of_call, undefined, where
from ..judges import must_raise
from ..spec import CheckSpec, check_spec
from ..verdict import NOT_WRITTEN, Verdict
from .kind import NormKind


def batch_of_one_spec(
    kind: NormKind, grade_id: str = "batch_of_one", *, points: float
) -> CheckSpec:
    def rule(seen):
        case, error = seen.case, seen.value
        if case.tag == "two" or (error and error[0] == "NotImplementedError"):
            return failure_of_call(kind.function, case, seen.result)
        if error is None:
            return (
                f"Batch of one: for {where(case)} {kind.function} returned an output. One "
                f"record per feature has nothing to average over: every output would be "
                f"beta. Batch-norm needs a crowd; raise ValueError with a message."
            )
        if error[0] != "ValueError":
            message = (
                f"Batch of one: for {where(case)} {kind.function} raised {error[0]} "
                f"({error[1]}); raise ValueError saying the batch is too small."
            )
            return Verdict(NOT_WRITTEN, message) if undefined(case, seen.result) else message
        return None

    return check_spec(
        grade_id,
        kind.function,
        must_raise(rule),
        "a single record raises ValueError (batch-norm needs a crowd)",
        misconception="a batch of one normalized instead of refused",
        points=points,
    )
