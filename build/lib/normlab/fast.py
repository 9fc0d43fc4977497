"""A fast NumPy LayerNorm: the reference's arithmetic, blocked so it runs in cache.

Ba, Kiros and Hinton (2016, arXiv:1607.06450), eqs. (3)-(4), computed with the
same shifted two-pass statistics as `normlab.stats.centered_and_var`, operation
for operation, so the result is bit for bit the reference's `layer_norm` (the
tests check `np.array_equal`). Only the schedule changes:

- Records are processed in blocks of about BLOCK_BYTES, so that a block's
  working set (its input, one scratch block, its output) stays in cache. The
  reference makes every intermediate as large as x itself, so each of its
  eight steps streams whole arrays through main memory;
  here x is read from memory once and y written once, and the other steps hit
  cache. Blocks are not smaller because each NumPy call costs about a
  microsecond on its own, whatever its size.
- Nothing large is allocated per call: scratch is one block, the squares are
  written into the output block (it is overwritten a moment later anyway), and
  `out` may be given, even `out=x` to normalize in place.
- Broadcasting costs NumPy little only if it runs one record per inner loop:
  for long records the ufunc buffer is set to one record (`_one_row_per_loop`),
  for short ones gamma and beta are tiled to the block's shape (`_per_block`).

NumPy cannot fuse these steps into one pass the way torch's C++ kernel does,
which is why this version is still several times slower than torch on one CPU
thread: the chapter on speed measures how far.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ._inputs import ZERO_VARIANCE, as_feature_param, as_records, check_eps, raise_if_undefined

BLOCK_BYTES = 2**20  # one (rows, d) scratch block: about 1 MiB, measured best here
ROW_LOOP_MIN_D = 256  # from this record length on, one record per ufunc inner loop is faster


def block_rows_for(d: int, itemsize: int, block_bytes: int = BLOCK_BYTES) -> int:
    """Rows per block so that one (rows, d) scratch block takes about `block_bytes`."""
    return max(1, block_bytes // (d * itemsize))


def layer_norm_fast(x, gamma=None, beta=None, eps: float = 1e-5, out=None, *, block_rows=None):
    """LayerNorm over the last axis, bit-identical to `normlab.layer_norm`, blocked for speed.

    Ba, Kiros and Hinton (2016), eqs. (3)-(4), with the reference's shifted
    two-pass statistics. Arguments and dtypes as in `layer_norm`. `out`, if given,
    must be a C-contiguous array of x's shape and of the result dtype; it is
    written and returned, and may be x itself. `block_rows` overrides the number
    of records per block (default: about BLOCK_BYTES of scratch).

    >>> layer_norm_fast(np.array([[1.0, 2.0, 3.0, 4.0]]), eps=0.0).round(6).tolist()
    [[-1.341641, -0.447214, 0.447214, 1.341641]]
    """
    arr, out_dtype = as_records(x)
    d = arr.shape[-1]
    ctype = arr.dtype  # compute dtype: float32 or float64
    gamma = as_feature_param(gamma, d, ctype, name="gamma")
    beta = as_feature_param(beta, d, ctype, name="beta")
    eps = check_eps(eps)
    out = _check_out(out, arr, out_dtype)
    x2 = arr.reshape(-1, d)  # (n, d) records; a copy only if x was not contiguous
    y2 = out.reshape(-1, d)  # (n, d) a view: out is C-contiguous
    n = x2.shape[0]
    if n == 0:
        return out

    rows = min(n, block_rows or block_rows_for(d, ctype.itemsize))
    xc_block = np.empty((rows, d), ctype)  # (rows, d) shifted, then centred records
    stat_block = np.empty((rows, 1), ctype)  # (rows, 1) a mean, then a variance
    mean_block = np.empty((rows, 1), ctype)  # (rows, 1)
    # the output block doubles as scratch for the squares, unless a cast is still to come
    y_scratch = None if out_dtype == ctype else np.empty((rows, d), ctype)
    gamma_rows, beta_rows = _per_block(gamma, rows, d), _per_block(beta, rows, d)
    d_count = ctype.type(d)
    eps_c = ctype.type(eps)

    for start in range(0, n, rows):
        stop = min(start + rows, n)
        k = stop - start
        xb = x2[start:stop]  # (k, d) read from memory once, here
        xc = xc_block[:k]
        yb = y2[start:stop] if y_scratch is None else y_scratch[:k]  # (k, d)
        mean, var = mean_block[:k], stat_block[:k]

        with _one_row_per_loop(d):
            # shift by one member K of each record: small summands
            np.subtract(xb, xb[:, :1], out=xc)
        # mean(r - K): np.mean's own steps, a sum then a division by d
        np.add.reduce(xc, axis=-1, keepdims=True, out=mean)
        np.divide(mean, d_count, out=mean)
        with _one_row_per_loop(d):
            # r - mu = (r - K) - mean(r - K)
            np.subtract(xc, mean, out=xc)
            np.multiply(xc, xc, out=yb)
        # sigma^2 = mean((r - mu)^2), population variance: divide by d, not d - 1
        np.add.reduce(yb, axis=-1, keepdims=True, out=var)
        np.divide(var, d_count, out=var)
        # sqrt(sigma^2 + eps): eps inside the square root
        denom = np.sqrt(np.add(var, eps_c, out=var), out=var)  # (k, 1) in var's place
        raise_if_undefined(denom, eps, ZERO_VARIANCE, leading=arr.shape[:-1], first=start)
        with _one_row_per_loop(d):
            np.divide(xc, denom, out=yb)  # (k, d) standardized
            if gamma_rows is not None:
                np.multiply(yb, gamma_rows[:k], out=yb)
            if beta_rows is not None:
                np.add(yb, beta_rows[:k], out=yb)
        if y_scratch is not None:
            np.copyto(y2[start:stop], yb, casting="same_kind")  # e.g. float32 -> float16
    return out


def _per_block(param, rows: int, d: int):
    """gamma or beta shaped to broadcast over a block: (1, d), or tiled to (rows, d) when the
    records are short, so that the multiply is one flat loop, not one short loop per record."""
    if param is None:
        return None
    if d >= ROW_LOOP_MIN_D:
        return param.reshape(1, d)  # (1, d): slicing [:k] keeps it (1, d)
    return np.tile(param, (rows, 1))  # (rows, d)


@contextmanager
def _one_row_per_loop(d: int):
    """Run elementwise ufuncs one record per inner loop when records are long.

    With its default buffer (8192 elements) NumPy packs several records into
    one buffered inner loop whenever an operand is broadcast (the per-record
    mean, the gain); for d >= 256 that packing costs more than it saves (it
    made these steps about 1.5 times slower here), and a buffer no larger than
    one record turns it off. Elementwise results do not depend on the loop, so this changes speed
    only. Reductions stay outside: NumPy does not promise that their summation
    order ignores the buffer, and they must sum exactly as the reference does.
    """
    with np.errstate():  # restores the caller's buffer size on exit
        if d >= ROW_LOOP_MIN_D:
            np.setbufsize(min(d // 16 * 16, np.getbufsize()))
        yield


def _check_out(out, arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    shape = arr.shape
    if out is None:
        return np.empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a NumPy array; got {type(out).__name__}")
    if out.shape != shape or out.dtype != dtype:
        raise ValueError(
            f"out has shape {out.shape} and dtype {out.dtype}; expected shape {shape} "
            f"and dtype {dtype}"
        )
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be C-contiguous and writeable")
    same_start = out.__array_interface__["data"][0] == arr.__array_interface__["data"][0]
    if np.may_share_memory(out, arr) and not (same_start and arr.flags.c_contiguous):
        raise ValueError("out overlaps x without being x itself: results would be garbled")
    return out
