"""Checks of plain values (ps1's hand calculations, parameter counts): `get` cases."""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from .evidence import failure_of_call, fmt
from .spec import CheckSpec


def value_spec(grade_id: str, targets: tuple[str, ...], judge_values, summary: str) -> CheckSpec:
    """A check that reads `targets` and calls judge_values(dict name -> value) -> None | str."""

    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        return [Case(name, "get", tag="value", label=name) for name in targets]

    def judge(cases, results):
        values = {}
        for case, result in zip(cases, results, strict=True):
            problem = failure_of_call(case.target, case, result)
            if problem:
                return problem
            values[case.target] = result.output
        return judge_values(values)

    return CheckSpec(grade_id, targets, make_cases, judge, summary)


def number(name: str, value) -> tuple[float | None, str | None]:
    """The value as a float, or a message saying it is not one number."""
    arr = np.asarray(value) if isinstance(value, int | float | np.number | np.ndarray) else None
    if isinstance(value, bool) or arr is None or arr.dtype.kind not in "iuf" or arr.size != 1:
        shown = fmt(value) if isinstance(value, np.ndarray | list) else repr(value)[:60]
        return None, f"{name} should be one number; it is {shown}."
    return float(arr.reshape(())), None


def vector(name: str, value, length: int) -> tuple[np.ndarray | None, str | None]:
    """The value as a float vector of `length`, or a message."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None, f"{name} should be {length} numbers; it is {type(value).__name__}."
    if arr.shape != (length,):
        return (
            None,
            f"{name} should hold {length} numbers (shape ({length},)); its shape is {arr.shape}.",
        )
    return arr, None


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    return abs(a - b) <= rel * max(1.0, abs(b))
