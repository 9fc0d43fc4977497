"""Does a trained LayerNorm map its inputs along an S? The observation behind DyT, measured.

Zhu, Chen, He, LeCun and Liu ("Transformers without Normalization", 2025, arXiv:2503.10622)
plot the inputs of trained transformers' LayerNorms against their outputs: in the early layers
the points lie mostly on a line, in the deeper ones on an S-shaped, tanh-like curve, which led
them to replace the norm by tanh(alpha x). For one token LayerNorm is a straight line,
x_hat = (x - mu) / sigma (Ba, Kiros and Hinton, 2016, arXiv:1607.06450); over many tokens the
plot is a crowd of such lines of slopes 1 / sigma. It bends into an S only where the tokens that
reach extreme inputs have a large sigma, so their lines are flat.

    normalized_io  every LayerNorm's input and its output before gain and bias, token by token
    fit            how much of that cloud a straight line explains, and how much a scaled tanh
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..layer_norm import layer_norm
from ..torch_twins import LayerNorm

COARSE = np.geomspace(1e-3, 1e2, 41)  # alpha's first grid for the tanh fit, then a finer one


@torch.no_grad()
def normalized_io(model: nn.Module, *inputs) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{name: (x, x_hat)} for every torch_twins.LayerNorm of `model`, on one forward pass.

    x is what the LayerNorm received, one row per token, (tokens, d), float64; x_hat is
    normlab.layer_norm of it with the module's eps, before the gain and bias. Names are the
    modules' own (`stack.blocks.0.ln_attn`, ..., `stack.final_ln`), in the order they ran.
    """
    seen: dict[str, np.ndarray] = {}

    def keep(name):
        def hook(module, args, output):
            seen[name] = args[0].detach().double().reshape(-1, args[0].shape[-1]).numpy()

        return hook

    handles = [
        module.register_forward_hook(keep(name))
        for name, module in model.named_modules()
        if isinstance(module, LayerNorm)
    ]
    try:
        model(*inputs)
    finally:
        for handle in handles:
            handle.remove()
    eps = {name: m.eps for name, m in model.named_modules() if isinstance(m, LayerNorm)}
    return {name: (x, layer_norm(x, eps=eps[name])) for name, x in seen.items()}


@dataclass(frozen=True)
class Fit:
    """How well y is described by a straight line, and by gain * tanh(alpha * x)."""

    line_r2: float  # R^2 of the least-squares line y = a x + b
    tanh_r2: float  # R^2 of the best gain * tanh(alpha x), alpha within 1 % of the best
    alpha: float
    gain: float


def _r2(y: np.ndarray, predicted: np.ndarray) -> float:
    # R^2 = 1 - residual sum of squares / total sum of squares
    return float(1 - np.sum((y - predicted) ** 2) / np.sum((y - y.mean()) ** 2))


def fit(x: np.ndarray, y: np.ndarray) -> Fit:
    """The line and the tanh that best describe the points (x, y), pooled over every token.

    A tanh at a small alpha is a line (tanh(u) ~ u), so tanh_r2 can match line_r2 without an
    S; it beats it clearly only where the cloud bends. For a given alpha the best gain is the
    least-squares one, sum(y t) / sum(t t) with t = tanh(alpha x).
    """
    x, y = np.ravel(x).astype(float), np.ravel(y).astype(float)
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"need matching x and y of at least 3 points; got {x.size} and {y.size}")
    slope, intercept = np.polyfit(x, y, 1)
    best = _best_tanh(x, y, COARSE)
    # a ratio of 1.33 between neighbours of COARSE: search that interval in steps of 1 %
    best = max(best, _best_tanh(x, y, best[1] * np.geomspace(1 / 1.34, 1.34, 59)))
    return Fit(_r2(y, slope * x + intercept), *best)


def _best_tanh(x: np.ndarray, y: np.ndarray, alphas: np.ndarray) -> tuple[float, float, float]:
    """(R^2, alpha, gain) of the best gain * tanh(alpha x) over `alphas`."""
    best = (-np.inf, np.nan, np.nan)
    for alpha in alphas:
        t = np.tanh(alpha * x)
        gain = float(np.sum(t * y) / np.sum(t * t))  # sums, not BLAS dots: one thread
        best = max(best, (_r2(y, gain * t), float(alpha), gain))
    return best
