"""input_untouched: the arguments are not written into."""

from __future__ import annotations

from ..evidence import where
from ..judges import each_case, returned
from ..spec import CheckSpec
from .kind import NormKind, norm_cell


def untouched(param_names: tuple[str, ...]):
    """Rule: the call wrote into none of its array arguments (named by `param_names`)."""

    def rule(seen):
        if not seen.result.modified_inputs:
            return None
        key = seen.result.modified_inputs[0]
        name = param_names[key] if isinstance(key, int) else key
        return (
            f"Input modified: {seen.case.target} wrote into its argument {name} "
            f"({where(seen.case)}). In-place updates such as `{name} -= ...` change the "
            f"caller's array; compute into a new array instead."
        )

    return rule


def input_untouched_spec(
    kind: NormKind, grade_id: str = "input_untouched", *, points: float
) -> CheckSpec:
    return norm_cell(
        input_untouched_spec,
        kind,
        grade_id,
        each_case(returned, untouched(kind.param_names)),
        "does not write into its arguments",
        misconception="writes into its arguments",
        points=points,
    )
