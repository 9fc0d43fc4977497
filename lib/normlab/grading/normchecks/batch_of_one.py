"""batch_of_one (batch-norm): a single record raises ValueError."""

from __future__ import annotations

from normlab_sandbox.cases import Case

from ..evidence import failure_of_call, where
from ..spec import CheckSpec
from .kind import NormKind, call, messy, norm_spec, rng_for


def batch_of_one_spec(kind: NormKind, grade_id: str = "batch_of_one") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        cases = [
            call(kind, messy(rng, (1, 5)), tag="one"),
            call(kind, messy(rng, (2, 5)), tag="two"),
        ]
        if hidden:
            cases += [call(kind, messy(rng, (1, 1, 4)), tag="one")]
        return cases

    def judge(cases, results):
        for case, result in zip(cases, results, strict=True):
            if case.tag == "two":
                problem = failure_of_call(kind.function, case, result)
                if problem:
                    return problem
                continue
            if result.error is None:
                return (
                    f"Batch of one: for {where(case)} {kind.function} returned an output. One "
                    f"record per feature has nothing to average over: every output would be "
                    f"beta. Batch-norm needs a crowd; raise ValueError with a message."
                )
            if result.error[0] == "NotImplementedError":
                return failure_of_call(kind.function, case, result)
            if result.error[0] != "ValueError":
                return (
                    f"Batch of one: for {where(case)} {kind.function} raised {result.error[0]} "
                    f"({result.error[1]}); raise ValueError saying the batch is too small."
                )
        return None

    summary = "a single record raises ValueError (batch-norm needs a crowd)"
    return norm_spec(kind, grade_id, make_cases, judge, summary)
