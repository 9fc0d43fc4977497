"""Torch twins of the NumPy reference: the same math on tensors, on any device.

Imported on demand (`from normlab import torch_twins`), never by `import normlab`,
so the grading kernel and the chapters that do not need torch do not pay for it.

Ba, Kiros and Hinton (2016, arXiv:1607.06450) for LayerNorm; Zhang and Sennrich
(2019, arXiv:1910.07467) for RMSNorm; Zhu, Chen, He, LeCun and Liu (2025, arXiv:2503.10622)
for Dynamic Tanh, which has no statistics to compute. Half-precision inputs (float16, bfloat16)
are computed in float32 and returned in their own dtype, as in the NumPy reference.
"""

from __future__ import annotations

import torch
from torch import nn

_HALF = (torch.float16, torch.bfloat16)


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    if x.dtype in _HALF:
        return torch.float32
    if not x.is_floating_point():
        return torch.float64
    return x.dtype


def _check(x: torch.Tensor, weight, bias, eps: float) -> None:
    if x.dim() == 0 or x.shape[-1] == 0:
        raise ValueError(f"x has shape {tuple(x.shape)}: need a non-empty feature axis (..., d)")
    d = x.shape[-1]
    for name, p in (("gamma", weight), ("beta", bias)):
        if p is not None and tuple(p.shape) != (d,):
            raise ValueError(f"{name} has shape {tuple(p.shape)}; expected ({d},) or None")
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0; got {eps!r}")


def layer_norm(x: torch.Tensor, gamma=None, beta=None, eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm over the last axis, two-pass statistics (Ba et al., 2016, eqs. 3-4)."""
    _check(x, gamma, beta, eps)
    xc = x.to(_compute_dtype(x))
    mu = xc.mean(dim=-1, keepdim=True)  # (..., 1)
    centred = xc - mu  # (..., d)
    # sigma^2 = mean((x - mu)^2), population variance: divide by d, not d - 1
    var = (centred * centred).mean(dim=-1, keepdim=True)  # (..., 1)
    y = centred * torch.rsqrt(var + eps)  # (..., d)
    if gamma is not None:
        y = y * gamma.to(y.dtype)
    if beta is not None:
        y = y + beta.to(y.dtype)
    return y.to(x.dtype if x.is_floating_point() else y.dtype)


def rms_norm(x: torch.Tensor, gamma=None, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last axis (Zhang and Sennrich, 2019, eq. 4)."""
    _check(x, gamma, None, eps)
    xc = x.to(_compute_dtype(x))
    y = xc * torch.rsqrt((xc * xc).mean(dim=-1, keepdim=True) + eps)  # (..., d)
    if gamma is not None:
        y = y * gamma.to(y.dtype)
    return y.to(x.dtype if x.is_floating_point() else y.dtype)


class LayerNorm(nn.Module):
    """LayerNorm module with an optional bias: 2 d parameters, or d with bias=False."""

    def __init__(self, d_model: int, eps: float = 1e-5, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model, device=device, dtype=dtype))
        self.bias = nn.Parameter(torch.zeros(d_model, device=device, dtype=dtype)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.weight, self.bias, self.eps)


class RMSNorm(nn.Module):
    """RMSNorm module: a gain per feature, no bias, d parameters."""

    def __init__(self, d_model: int, eps: float = 1e-6, device=None, dtype=None):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model, device=device, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)


class DyT(nn.Module):
    """Dynamic Tanh, gamma * tanh(alpha * x) + beta (Zhu et al., 2025, arXiv:2503.10622).

    As the paper's Algorithm 1: one learnable scalar alpha (kept in a tensor of shape (1,),
    initialised at `alpha_init`, 0.5 in the paper), a gain `weight` of ones and a bias of zeros
    per feature; 2 d + 1 parameters, and no reduction over any axis.
    """

    def __init__(self, d_model: int, alpha_init: float = 0.5, device=None, dtype=None):
        super().__init__()
        self.alpha = nn.Parameter(torch.full((1,), alpha_init, device=device, dtype=dtype))
        self.weight = nn.Parameter(torch.ones(d_model, device=device, dtype=dtype))
        self.bias = nn.Parameter(torch.zeros(d_model, device=device, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.alpha * x) * self.weight + self.bias  # (..., d)
