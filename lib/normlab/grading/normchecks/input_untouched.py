"""input_untouched: the arguments are not written into."""

from __future__ import annotations

from ..evidence import where
from ..judges import each_case, returned
from ..spec import CheckSpec, check_spec
from .kind import NormKind

IN_PLACE = (
    ". In-place updates such as `{name} -= ...` change the caller's array; compute into a new "
    "array instead."
)


def untouched(param_names: tuple[str, ...], advice: str = IN_PLACE):
    """Rule: the call wrote into none of its array arguments (named by `param_names`); the
    message ends with `advice` (formatted with the argument's name)."""

    def rule(seen):
        if not seen.result.modified_inputs:
            return None
        key = seen.result.modified_inputs[0]
        name = param_names[key] if isinstance(key, int) else key
        return (
            f"Input modified: {seen.case.target} wrote into its argument {name} "
            f"({where(seen.case)}){advice.format(name=name)}"
        )

    return rule


def untouched_spec(
    grade_id: str,
    function: str,
    rule,
    *,
    points: float,
    summary: str = "does not write into its arguments",
    **fields,
) -> CheckSpec:
    """The cell of `function` whose rule(seen) reads what the call wrote into
    (`Result.modified_inputs`: `untouched(names)`, or a function's own words)."""
    fields |= {"misconception": "writes into its arguments", "points": points}
    return check_spec(grade_id, function, each_case(returned, rule), summary, **fields)


def input_untouched_spec(
    kind: NormKind, grade_id: str = "input_untouched", *, points: float
) -> CheckSpec:
    rule = untouched(kind.param_names)
    return untouched_spec(
        grade_id, kind.function, rule, points=points, builder=input_untouched_spec, kind=kind
    )
