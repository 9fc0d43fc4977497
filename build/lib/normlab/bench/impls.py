"""The implementations the bench times, each wrapped as one call with a reused output.

Names (`impl`) are a contract (ARCHITECTURE.md): numpy_naive, numpy_fast, numpy_copy on the
CPU; torch_cpu (one record per thread count); torch_cuda and torch_cuda_copy on a GPU.
Each `Impl` holds `run`, one call to time, and `output_rows`, the rows of the last
result as float64 for the check against the reference.

Outputs. numpy_fast and the copies write into one buffer allocated here, once.
numpy_naive is the reference as written: it allocates its result and temporaries.
torch has no out= for layer_norm (`native_layer_norm.out` allocates, then copies),
so torch's results are fresh tensors; the previous result is dropped before the
next call so its memory can be reused (see timing.py), and on the CPU each call
covers the input in slices of TORCH_CPU_SLICE_BYTES, all kept until the call ends,
so every output lands in distinct, already-touched memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..fast import layer_norm_fast
from ..layer_norm import layer_norm

TORCH_CPU_SLICE_BYTES = 4 * 2**20


def time_cpu(run: Callable[[], None]) -> float:
    """Wall-clock seconds of one call."""
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _nothing() -> None:
    pass


@dataclass
class Impl:
    """One implementation, ready to call on one input."""

    impl: str  # the contract name
    device: str  # "cpu" or "cuda"
    run: Callable[[], None]  # one call; its result stays readable until the next call
    output_rows: Callable[[np.ndarray], np.ndarray]  # rows of the last result, float64
    kernel: str  # what is called, e.g. "normlab.fast.layer_norm_fast"
    threads: int | None = None  # CPU threads torch may use; None where not applicable
    is_copy: bool = False  # a copy ceiling, not a LayerNorm
    prepare: Callable[[], None] = field(default=_nothing)  # untimed, before every call
    timer: Callable[[Callable[[], None]], float] = field(default=time_cpu)

    @property
    def label(self) -> str:
        return self.impl if self.threads is None else f"{self.impl} ({self.threads} thr)"


def numpy_impls(x: np.ndarray, gamma, beta, eps: float) -> list[Impl]:
    """numpy_naive, numpy_fast and numpy_copy on x of shape (rows, d)."""
    last = {}

    def run_naive() -> None:
        last["naive"] = None  # drop the previous result first: its memory is reused
        last["naive"] = layer_norm(x, gamma, beta, eps)

    fast_out = np.empty_like(x)  # (rows, d) reused by every call
    copy_out = np.empty_like(x)  # (rows, d)
    return [
        Impl(
            "numpy_naive",
            "cpu",
            run_naive,
            lambda idx: last["naive"][idx].astype(np.float64),
            kernel="normlab.layer_norm",
        ),
        Impl(
            "numpy_fast",
            "cpu",
            lambda: layer_norm_fast(x, gamma, beta, eps, out=fast_out),
            lambda idx: fast_out[idx].astype(np.float64),
            kernel="normlab.fast.layer_norm_fast",
        ),
        Impl(
            "numpy_copy",
            "cpu",
            lambda: np.copyto(copy_out, x),
            lambda idx: copy_out[idx].astype(np.float64),
            kernel="numpy.copyto",
            is_copy=True,
        ),
    ]


def torch_layer_norm_impl(impl, x, gamma, beta, eps, *, twins=False, slice_rows=None, **extra):
    """One torch LayerNorm call on x (rows, d), on x's device, its output kept.

    `twins` calls normlab.torch_twins.layer_norm (the same math written out in torch
    ops) instead of torch.nn.functional.layer_norm (torch's fused kernel).
    `slice_rows` splits the call into slices of that many rows (None: one call).
    """
    import torch
    import torch.nn.functional as F

    from .. import torch_twins

    d = x.shape[-1]
    rows = x.shape[0]
    step = slice_rows or rows
    last = {}

    if twins:

        def norm(part):
            return torch_twins.layer_norm(part, gamma, beta, eps)

        kernel = "normlab.torch_twins.layer_norm"
    else:

        def norm(part):
            return F.layer_norm(part, (d,), gamma, beta, eps)

        kernel = "torch.nn.functional.layer_norm"

    def run() -> None:
        last["parts"] = None  # drop the previous result first: its memory is reused
        last["parts"] = [norm(x[start : start + step]) for start in range(0, rows, step)]

    def output_rows(idx: np.ndarray) -> np.ndarray:
        parts = last["parts"]
        whole = parts[0] if len(parts) == 1 else torch.cat(parts)  # (rows, d)
        return to_float64(whole[idx_tensor(idx, whole.device)])

    return Impl(impl, x.device.type, run, output_rows, kernel=kernel, **extra)


def torch_copy_impl(impl, x, **extra) -> Impl:
    """The copy ceiling on x's device: dst.copy_(x) into one reused tensor."""
    import torch

    dst = torch.empty_like(x)
    return Impl(
        impl,
        x.device.type,
        lambda: dst.copy_(x),
        lambda idx: to_float64(dst[idx_tensor(idx, dst.device)]),
        kernel="torch.Tensor.copy_",
        is_copy=True,
        **extra,
    )


def torch_cpu_impls(x: np.ndarray, gamma, beta, eps: float, threads: list[int]) -> list[Impl]:
    """torch_cpu, F.layer_norm on the same memory as the NumPy input, once per thread count."""
    import torch

    xt = torch.from_numpy(x)  # shares x's memory: every CPU impl reads the same bytes
    gt = None if gamma is None else torch.from_numpy(gamma)
    bt = None if beta is None else torch.from_numpy(beta)
    slice_rows = max(1, TORCH_CPU_SLICE_BYTES // (x.shape[1] * x.itemsize))
    return [
        torch_layer_norm_impl(
            "torch_cpu",
            xt,
            gt,
            bt,
            eps,
            slice_rows=slice_rows,
            threads=n,
            prepare=lambda n=n: torch.set_num_threads(n),
        )
        for n in threads
    ]


def idx_tensor(idx: np.ndarray, device):
    import torch

    return torch.as_tensor(idx, dtype=torch.long, device=device)


def to_float64(t) -> np.ndarray:
    """A torch tensor of any float dtype (bfloat16 too) as a float64 NumPy array."""
    import torch

    return t.detach().to(device="cpu", dtype=torch.float64).numpy()
