"""Input checking shared by every normalization in normlab.

One rule for dtypes, one rule for parameters, one wording for errors, so that
`layer_norm`, `rms_norm`, `batch_norm`, `group_norm` and the backward pass fail the
same way on the same bad input. Nothing here does arithmetic on the data.

Dtype rule (the one torch follows for half precision):
    float64 -> computed and returned in float64
    float32 -> computed and returned in float32
    float16 -> computed in float32, returned as float16
    integers, booleans, Python lists -> computed and returned in float64
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real

import numpy as np


def _real_array(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers; got an array of dtype {arr.dtype}")
    return arr


def _in_compute_dtype(arr: np.ndarray) -> tuple[np.ndarray, np.dtype]:
    """The dtype rule of the module docstring: (array to compute with, dtype to return)."""
    if arr.dtype == np.float64 or arr.dtype == np.float32:
        return arr, arr.dtype
    if arr.dtype == np.float16:
        return arr.astype(np.float32), np.dtype(np.float16)
    return arr.astype(np.float64), np.dtype(np.float64)


def as_records(x, *, name: str = "x") -> tuple[np.ndarray, np.dtype]:
    """Return `x` as an array in its compute dtype, and the dtype to return.

    The last axis holds the features of one record; it must exist and be non-empty.
    The array returned may share memory with `x`: callers must not write into it.
    """
    arr = _real_array(x, name)
    if arr.ndim == 0:
        raise ValueError(
            f"{name} is a 0-d scalar; normalization needs a feature axis: "
            "pass shape (..., d) with d >= 1"
        )
    if arr.shape[-1] == 0:
        raise ValueError(
            f"{name} has shape {arr.shape}: the feature axis (last axis) is empty, d = 0"
        )
    return _in_compute_dtype(arr)


def as_channels_first(x, *, name: str = "x") -> tuple[np.ndarray, np.dtype]:
    """Return `x`, shaped (N, C, ...) as torch's group_norm expects, in its compute dtype.

    Axis 0 is the batch, axis 1 the channels (C >= 1); any further axes are positions
    (an image's H and W, a sequence's T). Same dtype rule and sharing as `as_records`.
    """
    arr = _real_array(x, name)
    if arr.ndim < 2:
        raise ValueError(
            f"{name} has shape {arr.shape}: group_norm needs (N, C, ...) input, "
            "a batch axis and a channel axis at least"
        )
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has shape {arr.shape}: the channel axis (axis 1) is empty, C = 0")
    return _in_compute_dtype(arr)


def check_num_groups(num_groups, channels: int) -> int:
    """num_groups must be a positive integer that divides the number of channels."""
    if isinstance(num_groups, bool) or not isinstance(num_groups, int | np.integer):
        raise TypeError(f"num_groups must be an integer; got {type(num_groups).__name__}")
    if num_groups < 1:
        raise ValueError(f"num_groups must be >= 1; got num_groups = {num_groups}")
    if channels % num_groups:
        raise ValueError(
            f"x has C = {channels} channels, which num_groups = {num_groups} does not divide: "
            "every group must hold the same number of channels"
        )
    return int(num_groups)


def as_feature_param(
    p,
    d: int,
    compute_dtype: np.dtype,
    *,
    name: str,
    counted: str | None = None,
) -> np.ndarray | None:
    """Check a per-feature parameter (gain or bias): None, or shape (d,).

    `counted` is the finished phrase that says what d counts, for the error message: by
    default "the records have d = 8 features" (for d = 8); group_norm passes
    "x has C = 8 channels".
    """
    if p is None:
        return None
    arr = np.asarray(p)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers; got dtype {arr.dtype}")
    if arr.shape != (d,):
        counted = counted or f"the records have d = {d} features"
        raise ValueError(
            f"{name} has shape {arr.shape}, but {counted}: {name} must have shape ({d},) or be None"
        )
    return arr.astype(compute_dtype, copy=False)


def check_eps(eps) -> float:
    """Epsilon must be a finite real number >= 0."""
    if isinstance(eps, bool) or not isinstance(eps, Real | np.floating | np.integer):
        raise TypeError(f"eps must be a real number; got {type(eps).__name__}")
    value = float(eps)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"eps must be finite and >= 0; got eps = {eps!r}")
    return value


# what `raise_if_undefined` says of a constant record under LayerNorm with eps = 0
ZERO_VARIANCE = "has zero variance and eps = 0: LayerNorm is undefined there (0 / 0)"


def _record_at(where: tuple[int, ...]) -> str:
    # a 1-D input is a single record with no leading axes: "the record", not "record ()"
    return f"record {where}" if where else "the record"


def raise_if_undefined(
    denom: np.ndarray,
    eps: float,
    what: str,
    *,
    leading: tuple[int, ...] | None = None,
    first: int = 0,
    record: Callable[[tuple[int, ...]], str] = _record_at,
) -> None:
    """With eps = 0, raise a ValueError naming the first record whose denominator is 0.

    `denom` holds one denominator per record, shape (..., 1). `what` says what is wrong
    with such a record ("has zero variance and eps = 0: LayerNorm is undefined there
    (0 / 0)"). The record is named by its index in the leading axes, `record(where)`:
    "record (0, 1)", or "the record" for a 1-D input; group_norm names its (sample, group).
    A caller that works on a block of the flattened records (fast.py) passes the flat
    index of the block's first record, `first`, and the leading shape of the whole input.
    """
    if eps != 0.0 or denom.all():
        return
    flat = first + int(np.flatnonzero(denom == 0)[0])
    shape = denom.shape[:-1] if leading is None else leading
    where = tuple(int(i) for i in np.unravel_index(flat, shape))
    raise ValueError(f"{record(where)} {what}; use eps > 0")


def check_same_shape(a: np.ndarray, b: np.ndarray, *, names: tuple[str, str]) -> None:
    """Raise a ValueError naming both shapes when two arrays differ in shape."""
    if a.shape != b.shape:
        raise ValueError(
            f"{names[0]} has shape {a.shape} but {names[1]} has shape {b.shape}; they must match"
        )
