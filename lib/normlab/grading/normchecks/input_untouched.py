"""input_untouched: the arguments are not written into."""

from __future__ import annotations

from normlab_sandbox.cases import Case

from ..evidence import failure_of_call, where
from ..spec import CheckSpec
from .kind import NormKind, call, messy, norm_spec, rng_for


def untouched_spec(kind: NormKind, grade_id: str = "input_untouched") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        shapes = [(3, 5)] + ([(2, 3, 4)] if hidden else [])
        cases = []
        for shape in shapes:
            d = shape[-1]
            beta = rng.normal(size=d) if kind.has_beta else None
            cases.append(
                call(kind, messy(rng, shape), gamma=rng.uniform(0.5, 2, d), beta=beta, tag="io")
            )
        return cases

    def judge(cases, results):
        for case, result in zip(cases, results, strict=True):
            problem = failure_of_call(kind.function, case, result)
            if problem:
                return problem
            if result.modified_inputs:
                key = result.modified_inputs[0]
                name = kind.param_names[key] if isinstance(key, int) else key
                return (
                    f"Input modified: {kind.function} wrote into its argument {name} "
                    f"({where(case)}). In-place updates such as `{name} -= ...` change the "
                    f"caller's array; compute into a new array instead."
                )
        return None

    summary = "does not write into its arguments"
    return norm_spec(kind, grade_id, make_cases, judge, summary)
