"""Checks of plain values (ps1's hand calculations, parameter counts): `get` cases."""

from __future__ import annotations

import numpy as np

from .evidence import fmt
from .judges import Seen, read_all, returned
from .spec import CheckSpec, check_spec


def value_spec(grade_id: str, targets: tuple[str, ...], rule, summary: str, **fields) -> CheckSpec:
    """A check that reads `targets` and judges them together: rule(seen) sees them as
    `seen.value`, a dict name -> value, and the first case as `seen.case`; `fields`: as
    `check_spec`'s."""

    def judge(cases, results, oracle):
        values, problem = read_all(returned, cases, results)
        if problem:
            return problem
        named = {case.target: value for case, value in zip(cases, values, strict=True)}
        return rule(Seen(cases[0], named, results[0], oracle))

    return check_spec(grade_id, targets, judge, summary, builder=value_spec, **fields)


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
        text = f"{name} should hold {length} numbers (shape ({length},)); its shape is {arr.shape}."
        return None, text
    return arr, None


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    return abs(a - b) <= rel * max(1.0, abs(b))


def looks_rounded(got, want, max_decimals: int = 6) -> bool:
    """Is `got` `want` rounded (half up or to even) or cut to 0 to max_decimals decimals?"""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    half_up = lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)  # noqa: E731 (2.5 -> 3)
    return any(
        np.allclose(got, cut(want * 10.0**k) / 10.0**k, rtol=0, atol=1e-12)
        for k in range(max_decimals + 1)
        for cut in (half_up, np.round, np.trunc)
    )
