"""Where LayerNorm sits in a transformer block, measured: gradient norms at initialisation.

Two placements of the same LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450):

    post-LN (Vaswani et al., 2017):  x <- LN(x + F(x))      normalizes the residual stream
    pre-LN  (Xiong et al., 2020):    x <- x + F(LN(x))      normalizes only the branch's input

Xiong et al., On Layer Normalization in the Transformer Architecture (2020, arXiv:2002.04745),
show that at initialisation post-LN's parameter gradients grow towards the output layers, which
is why post-LN needs a learning-rate warm-up, while pre-LN's stay level across depth.
`gradient_norms` measures that on a small stack on the CPU in about a second. Torch is imported
here, so `import normlab` does not import this module.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .torch_twins import LayerNorm

PLACEMENTS = ("post_ln", "pre_ln")


def check_placement(placement: str) -> None:
    """Refuse, with a clear ValueError, a placement that is not one of PLACEMENTS."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}; got {placement!r}")


class Block(nn.Module):
    """One transformer block: self-attention and a feed-forward branch, each with a LayerNorm."""

    def __init__(self, d_model: int, heads: int, placement: str):
        super().__init__()
        check_placement(placement)
        self.placement = placement
        self.attn = nn.MultiheadAttention(d_model, heads, bias=True, batch_first=True)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model)
        )
        self.ln_attn = LayerNorm(d_model)
        self.ln_ffn = LayerNorm(d_model)

        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform weights and zero biases, the initialisation Xiong et al. analyse."""
        for name, p in self.named_parameters():
            if name.startswith(("attn", "ffn")):
                nn.init.xavier_uniform_(p) if p.dim() == 2 else nn.init.zeros_(p)

    def _attend(self, h: torch.Tensor) -> torch.Tensor:
        return self.attn(h, h, h, need_weights=False)[0]  # (B, T, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.placement == "post_ln":
            x = self.ln_attn(x + self._attend(x))  # (B, T, d): LN on the residual stream
            return self.ln_ffn(x + self.ffn(x))
        x = x + self._attend(self.ln_attn(x))  # (B, T, d): LN on the branch input only
        return x + self.ffn(self.ln_ffn(x))


class Stack(nn.Module):
    """`layers` blocks; pre-LN adds the final LayerNorm that its stream needs (Xiong et al.)."""

    def __init__(self, layers: int, d_model: int, heads: int, placement: str):
        super().__init__()
        check_placement(placement)  # also with layers = 0, where no Block would check it
        if layers < 0:
            raise ValueError(f"layers must be >= 0; got {layers}")
        self.blocks = nn.ModuleList(Block(d_model, heads, placement) for _ in range(layers))
        self.final_ln = LayerNorm(d_model) if placement == "pre_ln" else nn.Identity()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        stream = []
        for block in self.blocks:
            x = block(x)
            stream.append(x)
        return self.final_ln(x), stream


def gradient_norms(
    placement: str,
    *,
    layers: int = 6,
    d_model: int = 64,
    heads: int = 4,
    batch: int = 8,
    tokens: int = 16,
    vocab: int = 128,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Per-layer gradient norms of a freshly initialised stack, one random batch, CPU, float32.

    The loss is next-token cross-entropy against random targets through a linear read-out, as
    in a language model at step 0. Returns arrays of length `layers`:
    "ffn_w2": Frobenius norm of the gradient of each block's last feed-forward weight (the
    quantity of Xiong et al., Figure 3); "all": norm of the gradient of all of a block's
    parameters; "stream": RMS of the residual stream after each block.
    """
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    stack = Stack(layers, d_model, heads, placement)
    embed = nn.Embedding(vocab, d_model)
    readout = nn.Linear(d_model, vocab)
    ids = torch.randint(vocab, (batch, tokens), generator=generator)  # (B, T)
    targets = torch.randint(vocab, (batch, tokens), generator=generator)  # (B, T)
    out, stream = stack(embed(ids))  # (B, T, d)
    logits = readout(out)  # (B, T, vocab)
    loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    loss.backward()
    ffn_w2 = [block.ffn[2].weight.grad.norm().item() for block in stack.blocks]
    every = [
        torch.sqrt(sum((p.grad**2).sum() for p in block.parameters())).item()
        for block in stack.blocks
    ]
    rms = [h.detach().pow(2).mean().sqrt().item() for h in stream]
    return {"ffn_w2": np.array(ffn_w2), "all": np.array(every), "stream": np.array(rms)}


def gradient_norms_by_seed(placement: str, seeds=range(5), **kwargs) -> dict[str, np.ndarray]:
    """`gradient_norms` for several initialisations (seeds): each array (len(seeds), layers)."""
    runs = [gradient_norms(placement, seed=s, **kwargs) for s in seeds]
    return {key: np.stack([run[key] for run in runs]) for key in runs[0]}


def mean_gradient_norms(placement: str, seeds=range(5), **kwargs) -> dict[str, np.ndarray]:
    """`gradient_norms` averaged over several initialisations (seeds)."""
    by_seed = gradient_norms_by_seed(placement, seeds, **kwargs)
    return {key: runs.mean(axis=0) for key, runs in by_seed.items()}
