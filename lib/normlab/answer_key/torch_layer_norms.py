"""torch's LayerNorm and its family, in float64 with autograd: ps8's expectations, through the
oracle only (Ba, Kiros and Hinton, 2016, arXiv:1607.06450, eqs. 3-4, as `torch.nn.LayerNorm`):
a member's output and gradients (`layer_norm`), a new module's state (`fresh_state`), and the
spirals run's losses (`training_losses`, once per process per member). Everything runs on one
thread (restored after), so a grading worker stays on its own CPU.
"""

from __future__ import annotations

from functools import cache, partial

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from normlab_sandbox import spirals
from normlab_sandbox.module_probes import sizes

from .formula_outputs import moments, scale

DETACHABLE = ("mean", "var")
# nn.LayerNorm's choices in the family (`normlab.grading.formulas`), over the trailing axes
LAYER_NORM = {"center": True, "divisor": "n", "eps_mode": "inside", "fixed_eps": 0.0, "detach": ()}


def member_output(x, weight, bias, eps, axes, center, divisor, eps_mode, fixed_eps, detach):
    """y = weight * (x - mean) / scale + bias over `axes`, one member of the family
    (`normlab.grading.formulas`), the mean or the variance detached as `detach` says."""
    centred, m2 = moments(x, axes, center, divisor, detach)
    y = centred / scale(m2, eps_mode, eps, fixed_eps, torch.sqrt)
    y = y if weight is None else y * weight
    return y if bias is None else y + bias


def layer_norm(
    x, normalized_shape, weight=None, bias=None, *, eps=1e-5, dy=None, axes=None, **member
) -> dict:
    """{"y", "dx", "dweight", "dbias"} as float64 arrays (gradients None without dy; weight
    and bias None: no gain and bias, as nn.LayerNorm(elementwise_affine=False)). By default
    nn.LayerNorm's formula; `member`, keywords of `LAYER_NORM`, picks another of the family."""
    choices = LAYER_NORM | member
    if unknown := sorted(choices.keys() - LAYER_NORM.keys()):
        raise TypeError(f"layer_norm takes the choices {list(LAYER_NORM)}; got {unknown}")
    if any(part not in DETACHABLE for part in choices["detach"]):
        raise ValueError(f"detach names {DETACHABLE}; got {choices['detach']!r}")
    with spirals.one_thread():
        xt = torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=dy is not None)
        params = [
            None if p is None else torch.tensor(np.asarray(p, dtype=np.float64), requires_grad=True)
            for p in (weight, bias)
        ]
        shape = sizes(normalized_shape)
        trailing = tuple(range(xt.ndim - len(shape), xt.ndim))
        axes = trailing if axes is None else tuple(axes)
        own = (choices["center"], choices["divisor"], choices["eps_mode"]) == (True, "n", "inside")
        if axes == trailing and own and not choices["detach"]:
            y = F.layer_norm(xt, shape, *params, eps=eps)
        else:
            y = member_output(xt, *params, eps, axes, **choices)
        if dy is not None:
            y.backward(torch.tensor(np.asarray(dy, dtype=np.float64)))
        grads = [None if dy is None or t is None else t.grad.numpy() for t in (xt, *params)]
    return dict(zip(("y", "dx", "dweight", "dbias"), [y.detach().numpy(), *grads], strict=True))


def fresh_state(normalized_shape, elementwise_affine=True) -> dict:
    """A new nn.LayerNorm's state_dict, {key: float64 array}."""
    fresh = nn.LayerNorm(normalized_shape, elementwise_affine=elementwise_affine)
    return {key: value.double().numpy() for key, value in fresh.state_dict().items()}


class FamilyLayerNorm(nn.Module):
    """A member of the family as a module for ps8's network: nn.LayerNorm's parameters and
    initial values, `member_output`'s formula; `frozen`: weight and bias are plain tensors,
    registered nowhere, so they never train."""

    def __init__(self, width: int, *, member: dict, frozen: bool) -> None:
        super().__init__()
        self.member = member
        weight, bias = torch.ones(width), torch.zeros(width)
        self.weight, self.bias = (weight, bias) if frozen else map(nn.Parameter, (weight, bias))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight, bias = self.weight.to(x.dtype), self.bias.to(x.dtype)
        return member_output(x, weight, bias, 1e-5, **self.member)


@cache
def _losses(run: tuple, member: tuple, frozen: bool) -> np.ndarray:
    choices = {"axes": (1,), **LAYER_NORM, **dict(member)}
    norm = partial(FamilyLayerNorm, member=choices, frozen=frozen)
    losses = spirals.train_losses(norm if member or frozen else nn.LayerNorm, **dict(run))
    losses.flags.writeable = False
    return losses


def training_losses(run: dict, *, frozen: bool = False, **member) -> np.ndarray:
    """The loss per step of ps8's spirals run with `run`'s settings and nn.LayerNorm in it,
    or the member of the family that `member`'s choices pick (axes of the (B, width)
    activations, center, divisor, eps_mode, detach), weight and bias `frozen` or trained."""
    key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in member.items()))
    return _losses(tuple(sorted(run.items())), key, frozen).copy()
