"""One small network, four normalizations (none, batch-norm, LayerNorm or RMSNorm) and DyT.

Each hidden layer is Linear -> norm -> tanh, the layout of Karpathy's makemore (part 3) and of
Ioffe and Szegedy (2015, arXiv:1502.03167), who normalize a layer's pre-activations. The norms:

    batch_norm  torch's BatchNorm1d: each feature over the batch, running statistics for eval
    layer_norm  normlab.torch_twins.LayerNorm: each record over its features (Ba et al., 2016)
    rms_norm    normlab.torch_twins.RMSNorm: each record's root mean square (Zhang and
                Sennrich, 2019, arXiv:1910.07467)
    none        the identity, the baseline
    center_only a control, not a norm: each record minus its mean, then gain and bias, as
                LayerNorm without its division by the standard deviation (CONTROLS)
    dyt         normlab.torch_twins.DyT, Dynamic Tanh in the norm's place: gamma * tanh(alpha x)
                + beta, alpha from 0.5, no statistics (Zhu et al., 2025, arXiv:2503.10622;
                NORM_FREE)

Everything else (widths, initialisation, tanh) is the same in all of them. The hidden linears start
either from torch's default (`init_scale=None`: uniform with std 1 / sqrt(3 fan_in), about a third
of Kaiming's for tanh) or from Kaiming's normal initialisation for tanh (He et al., 2015,
arXiv:1502.01852; gain 5/3 as `torch.nn.init.calculate_gain("tanh")`) times `init_scale`, with
zero biases. The read-out keeps torch's default in every case.
"""

from __future__ import annotations

import torch
from torch import nn

from ..torch_twins import DyT, LayerNorm, RMSNorm

NORMS = ("none", "batch_norm", "layer_norm", "rms_norm")
CONTROLS = ("center_only",)
NORM_FREE = ("dyt",)  # takes a norm's place, computes no statistic
TANH_GAIN = 5 / 3  # torch.nn.init.calculate_gain("tanh")


def make_norm(kind: str, width: int) -> nn.Module:
    """The normalization layer called `kind` for `width` features."""
    if kind == "none":
        return nn.Identity()
    if kind == "batch_norm":
        return nn.BatchNorm1d(width)
    if kind == "layer_norm":
        return LayerNorm(width)
    if kind == "rms_norm":
        return RMSNorm(width)
    if kind == "center_only":
        return CenterOnly(width)
    if kind == "dyt":
        return DyT(width)
    raise ValueError(f"norm must be one of {NORMS + CONTROLS + NORM_FREE}; got {kind!r}")


class CenterOnly(nn.Module):
    """LayerNorm's centring without its rescaling: y = (x - mean(x)) * weight + bias."""

    def __init__(self, d_model: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - x.mean(dim=-1, keepdim=True)) * self.weight + self.bias  # (B, d)


@torch.no_grad()
def kaiming_tanh_(linear: nn.Linear, scale: float) -> None:
    """Weights from N(0, (scale * 5/3)^2 / fan_in), biases zero: `scale` times Kaiming for tanh."""
    # std = gain / sqrt(fan_in) keeps a tanh layer's output variance steady (He et al., 2015)
    std = scale * TANH_GAIN / linear.in_features**0.5
    linear.weight.normal_(0.0, std)
    linear.bias.zero_()


class MLP(nn.Module):
    """`depth` hidden layers of `width` units (Linear -> norm -> tanh), then a linear read-out."""

    def __init__(
        self,
        norm: str,
        *,
        inputs: int = 2,
        width: int = 64,
        depth: int = 6,
        classes: int = 3,
        init_scale: float | None = None,
    ):
        super().__init__()
        if depth < 1 or width < 1:
            raise ValueError(f"need depth >= 1 and width >= 1; got {depth}, {width}")
        if init_scale is not None and not init_scale > 0:
            raise ValueError(f"init_scale must be None or > 0; got {init_scale!r}")
        fan_in = [inputs] + [width] * (depth - 1)
        self.linears = nn.ModuleList(nn.Linear(n, width) for n in fan_in)
        self.norms = nn.ModuleList(make_norm(norm, width) for _ in range(depth))
        self.readout = nn.Linear(width, classes)
        if init_scale is not None:
            for linear in self.linears:
                kaiming_tanh_(linear, init_scale)

    def forward_with_hidden(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The logits (B, classes) and every hidden layer's tanh output (B, width)."""
        hidden = []
        for linear, norm in zip(self.linears, self.norms, strict=True):
            x = torch.tanh(norm(linear(x)))  # (B, width)
            hidden.append(x)
        return self.readout(x), hidden

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_with_hidden(x)[0]  # (B, classes)
