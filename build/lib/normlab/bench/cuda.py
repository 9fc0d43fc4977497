"""The GPU side of the bench: inputs made on the device, CUDA-event timing.

A CUDA call returns before the GPU has finished: the host only queues work. So a
call is timed by two events recorded on the stream around it, after the device has
finished everything queued before (synchronize), and read once the second event has
completed. The time is the GPU's, from the first kernel's start to the last one's end.
"""

from __future__ import annotations

from .impls import Impl, torch_copy_impl, torch_layer_norm_impl


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def time_cuda(run) -> float:
    """Seconds of GPU time for one call, measured with CUDA events."""
    import torch

    torch.cuda.synchronize()  # nothing queued earlier may count
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3  # elapsed_time is in milliseconds


def make_inputs(rows: int, d: int, dtype_name: str, device: str, seed: int):
    """x (rows, d), gamma (d,), beta (d,) as torch tensors of `dtype_name` on `device`.

    x is standard normal; gamma = 1 + 0.1 N(0, 1) and beta = 0.1 N(0, 1), so that the
    gain and the bias both matter and a swapped or missing one fails the check.
    """
    import torch

    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(rows, d, generator=gen, device=device, dtype=torch.float32).to(dtype)
    gamma = (1 + 0.1 * torch.randn(d, generator=gen, device=device)).to(dtype)
    beta = (0.1 * torch.randn(d, generator=gen, device=device)).to(dtype)
    return x, gamma, beta


def torch_device_impls(x, gamma, beta, eps: float, timer=time_cuda) -> list[Impl]:
    """torch_cuda (torch's fused kernel, then the torch_twins version) and torch_cuda_copy.

    Written for CUDA tensors; on CPU tensors with `timer=time_cpu` the same code runs,
    which is how the tests exercise it on a machine without a GPU.
    """
    return [
        torch_layer_norm_impl("torch_cuda", x, gamma, beta, eps, timer=timer),
        torch_layer_norm_impl("torch_cuda", x, gamma, beta, eps, twins=True, timer=timer),
        torch_copy_impl("torch_cuda_copy", x, timer=timer),
    ]
