"""Small helpers judges share: describe a case, spot errors, show the smallest evidence."""

from __future__ import annotations

import re

import numpy as np

from normlab_sandbox.cases import Case, Result

from .verdict import CRASHED, NOT_WRITTEN, Message, Verdict


def fmt(value, digits: int = 4, limit: int = 8) -> str:
    """A short, readable rendering of an array or scalar for a message."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return f"{arr.item():.{digits}g}" if arr.dtype.kind == "f" else repr(arr.item())
    if arr.size > limit:
        return f"[{', '.join(fmt(v, digits) for v in arr.reshape(-1)[:limit])}, ...]"
    return np.array2string(
        arr, precision=digits, separator=", ", floatmode="maxprec", suppress_small=False
    ).replace("\n", "")


def where(case: Case) -> str:
    """The case's description for a message, e.g. 'a 3-D input of shape (2, 3, 8)'."""
    return case.label or case.tag or "one of the checks"


def undefined(case: Case, result: Result) -> bool:
    """Is the case's target missing from the namespace (NameError naming the target itself)?"""
    return result.error == ("NameError", f"name {case.target!r} is not defined")


def failure_of_call(name: str, case: Case, result: Result) -> Verdict | None:
    """The verdict if the call raised, or the value was missing, still its placeholder `...`
    (a blank notebook's value cells start `name = ...`) or None from a function (a blank
    notebook's function bodies hold only a comment), else None: "not written" for a missing
    answer, "crashed" for any other exception."""
    if result.error is None:
        if case.how == "get" and result.output_type == "ellipsis":
            return Verdict(
                NOT_WRITTEN, f"{name} is not written yet: replace the ... in its answer cell."
            )
        if case.how == "call" and result.output_type == "NoneType":
            return Verdict(
                NOT_WRITTEN,
                f"{name} is not written yet: it returns None ({where(case)}). Write its body "
                "in its answer cell, ending with return.",
            )
        return None
    kind, text = result.error
    if kind == "NotImplementedError":
        message = f"{name} is not written yet: it raises NotImplementedError ({where(case)})."
        return Verdict(NOT_WRITTEN, message)
    if kind == "NameError" and case.how == "get":
        return Verdict(
            NOT_WRITTEN, f"{name} is not defined: run the cell that defines it ({text})."
        )
    hint = _broadcast_hint(kind, text)
    message = f"{name} raised {kind}: {text.strip() if hint else text} ({where(case)}).{hint}"
    if undefined(case, result):
        return Verdict(NOT_WRITTEN, message)
    # the error without the sizes of the input it met (shapes as (...), whole numbers as N), so
    # that one cause reads the same on every input ("same cause as <cell>")
    generic = re.sub(r"\b\d+\b", "N", _SHAPE.sub("(...)", text.strip()))
    cause = keepdims_cause(name) if hint else f"{name} raised {kind}: {generic[:200]}"
    return Verdict(CRASHED, message, cause=cause)


def keepdims_cause(name: str) -> str:
    """The one cause of a statistic that lost its axis, however it shows (an error, or on a
    square input an output normalized with another record's statistics)."""
    return f"{name}'s statistics lost their last axis (missing keepdims)"


_SHAPE = re.compile(r"\(([\d,\s]*)\)")


def _broadcast_hint(kind: str, text: str) -> str:
    """For NumPy's broadcast error between an array and a statistic that lost its last axis
    ("shapes (3,5) (3,)"), the missing keepdims, named; else ''."""
    if kind != "ValueError" or "could not be broadcast" not in text:
        return ""
    shapes = [
        tuple(int(n) for n in found.split(",") if n.strip())
        for found in _SHAPE.findall(text.split("shapes", 1)[-1])
    ]
    for long in shapes:
        for short in shapes:
            if len(long) >= 1 and short == long[:-1]:
                return (
                    f" Missing keepdims: a statistic over the last axis has shape {short}, one "
                    f"value per record, and no longer lines up with the records of shape "
                    f"{long}; keep the axis with keepdims=True (or mean[..., None])."
                )
    return ""


def brief_type(output_type: str, short: int = 40, limit: int = 80) -> str:
    """A type as `run_case` names it, for a message: as it is up to `short` characters
    ("tuple(numpy.ndarray, float)"), else in words, "list of 3 lists of floats" for
    "list(list(float, float, float, float), list(float, ...), ...)", cut at `limit`."""
    if len(output_type) <= short:
        return output_type
    shown = _brief(_parse_type(output_type))
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _parse_type(text: str) -> tuple:
    """(name, items or None) of a type as `run_case` names it: "tuple(int, list(float))". Any
    text parses, since a student's class may name itself "W)(": a stray ")" is skipped, what
    is left open closes at the end, and a "(" deeper than `_DEEPEST` reads as a name."""
    reading = [("", [])]  # (name, items) of each type whose items are being read, innermost last
    for name, mark in re.findall(r"([^(),]*)([(),]?)", text):
        if mark == "(" and len(reading) <= _DEEPEST:
            reading.append((name.strip(), []))
        elif name.strip():
            reading[-1][1].append((name.strip(), None))
        if mark == ")" and len(reading) > 1:
            done = reading.pop()
            reading[-1][1].append(done)
    while len(reading) > 1:
        done = reading.pop()
        reading[-1][1].append(done)
    return reading[0][1][0] if reading[0][1] else (text.strip(), None)


_DEEPEST = 20  # levels of nesting read (Python's recursion in `_brief` stays far from its limit)


def _brief(node: tuple, plural: bool = False) -> str:
    name, items = node
    if items is None:
        return ("arrays" if name == "numpy.ndarray" else name + "s") if plural else name
    if not items:
        return f"empty {name}s" if plural else f"an empty {name}"
    kinds = {_brief(item, plural=True) for item in items}
    if len(kinds) == 1:
        inner = kinds.pop()
        return f"{name}s of {inner}" if plural else f"{name} of {len(items)} {inner}"
    return f"{name}({', '.join(_brief(item) for item in items)})"


def shown_type(result: Result) -> str:
    """What came back, as a message names it (see `brief_type`)."""
    return brief_type(result.output_type)


def array_output(name: str, case: Case, result: Result):
    """(the output as a float array of the first argument's shape, None), or (None, the problem)."""
    problem = failure_of_call(name, case, result)
    if problem:
        return None, problem
    out = result.output
    if isinstance(out, tuple) or out is None:
        shown = shown_type(result)
        text = f"{name} returned {shown}, not an array ({where(case)})."
        return None, Message(text, cause=f"{name} returns {shown}, not an array")
    arr = np.asarray(out)
    if arr.dtype.kind not in "biuf":
        text = f"{name} returned an array of dtype {arr.dtype}, not numbers ({where(case)})."
        return None, Message(text, cause=f"{name} returns an array of {arr.dtype}, not numbers")
    want = np.shape(case.args[0])
    if arr.shape != want:
        text = (
            f"{name} returned shape {arr.shape} for an input of shape {tuple(want)} "
            f"({where(case)}); the output must have the input's shape."
        )
        return None, Message(text, cause=f"{name} returns another shape than its input's")
    return arr.astype(np.float64), None


COUNTS = {2: "two", 3: "three", 4: "four"}


def arrays_output(name: str, case: Case, result: Result, parts, *, shapes=None, things="arrays"):
    """(the output, a tuple or list of len(parts) items, as float64 arrays named `parts`, None),
    or (None, the problem); with `shapes`, each has as many entries as its shape, read in it."""
    problem = failure_of_call(name, case, result)
    if problem:
        return None, problem
    out, count = result.output, COUNTS[len(parts)]
    shown = shown_type(result)
    if not isinstance(out, tuple) or len(out) != len(parts):
        text = (
            f"{name} must return {count} {things}, ({', '.join(parts)}); it returned "
            f"{shown} ({where(case)})."
        )
        return None, Message(text, cause=f"{name} returns {shown}, not {count} {things}")
    try:
        arrays = [np.asarray(value, dtype=np.float64) for value in out]
    except (TypeError, ValueError):
        text = f"{name} returned {shown}, not {count} arrays ({where(case)})."
        return None, Message(text, cause=f"{name} returns {shown}, not {count} arrays")
    for i, shape in enumerate(shapes or ()):
        if arrays[i].size != int(np.prod(shape)):
            text = (
                f"{parts[i]} has shape {arrays[i].shape} for {where(case)}; it should have "
                f"shape {shape}."
            )
            return None, Message(text, cause=f"{name}'s {parts[i]} has the wrong shape")
        arrays[i] = arrays[i].reshape(shape)
    return tuple(arrays), None


def worst(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float):
    """Index of the worst mismatch beyond tolerance (NaN counts), or None when all close."""
    actual, expected = (np.asarray(a, dtype=np.float64) for a in (actual, expected))
    with np.errstate(invalid="ignore"):
        gap = np.abs(actual - expected)
        bad = ~(gap <= atol + rtol * np.abs(expected))
    bad &= ~(np.isnan(actual) & np.isnan(expected))
    if not bad.any():
        return None
    gap = np.where(bad, np.where(np.isnan(gap), np.inf, gap), -1.0)
    return np.unravel_index(int(np.argmax(gap)), gap.shape)


def near(got, want, rtol: float, atol: float) -> bool:
    """got has want's shape and equals it to `rtol`, or `atol` times 1 + want's largest size."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    scale = 1.0 + np.abs(want).max(initial=0.0)
    return got.shape == want.shape and worst(got, want, rtol, atol * scale) is None


def affine_rows(xs: np.ndarray, ys: np.ndarray) -> bool:
    """Is each row of ys one affine map of the same row of xs (least squares, to 1e-6)?"""
    for xr, yr in zip(xs, ys, strict=True):
        design = np.stack([xr, np.ones_like(xr)], axis=1)
        coef, *_ = np.linalg.lstsq(design, yr, rcond=None)
        if not np.all(np.abs(design @ coef - yr) <= 1e-6 * (1 + np.abs(yr).max())):
            return False
    return True


def first_index(mask: np.ndarray) -> tuple[int, ...] | None:
    """The first True entry of a boolean array (in C order) as a tuple of plain ints, or None
    when none is True."""
    hits = np.argwhere(mask)
    return tuple(int(i) for i in hits[0]) if len(hits) else None


def first_beyond(values: np.ndarray, limit) -> tuple[int, ...] | None:
    """The first entry larger than limit in size (NaN counts as larger), or None."""
    return first_index(~(np.abs(values) <= limit))


def amount(value: float) -> str:
    """A size of change for a message, never mistaken for a number near 1: '0.383', or
    '1.4e-08 (that is 0.000000014)'."""
    value = float(value)
    shown = f"{value:.3g}"
    if "e-" not in shown:
        return shown
    decimals = 1 - int(np.floor(np.log10(value)))
    return f"{value:.2g} (that is {value:.{decimals}f})"


def record(index) -> str:
    """A record index as a tuple string: (0, 3)."""
    index = tuple(int(i) for i in index)
    if not index:
        return "(the only record)"
    return str(index[0]) if len(index) == 1 else str(index)


def warned(result: Result) -> str:
    """The first numeric warning the call raised, quoted, or ''."""
    numeric = (m for kind, m in result.warnings if kind in ("RuntimeWarning", "FloatingPointError"))
    return next((f" (NumPy warned: {message})" for message in numeric), "")


# what `Result.output_type` reads for three NumPy arrays, returned as a tuple or a list (a
# gradient triple, a batch-norm step)
THREE_ARRAYS = tuple(
    f"{kind}(numpy.ndarray, numpy.ndarray, numpy.ndarray)" for kind in ("tuple", "list")
)
