"""QK-norm against attention-logit growth, measured on a tiny causal language model (chapter 8).

Attention scores query i against key j with the logit q_i . k_j / sqrt(d_head). Dehghani et al.
(2023, Scaling Vision Transformers to 22 Billion Parameters, arXiv:2302.05442) saw these logits
grow so large while training ViTs of about 8B parameters that the attention weights became
one-hot (near-zero entropy) and the loss diverged. Their fix was to apply LayerNorm (Ba, Kiros and
Hinton, 2016, arXiv:1607.06450) to the queries and the keys before the dot product: QK-norm.
Wortsman et al. (2023, Small-scale proxies for large-scale Transformer training instabilities,
arXiv:2309.14322) reproduced the growth in small transformers trained at a high learning rate,
and QK-layernorm removed it. OLMo 2 (arXiv:2501.00656) and Gemma 3 (arXiv:2503.19786) use QK-norm.

Why it caps the logits: a LayerNorm output of d_head features has norm sqrt(d_head) (its mean
square is one) before the gain, so with gains g_q, g_k and no bias, by Cauchy-Schwarz

    |q_i . k_j| / sqrt(d_head) <= max|g_q| * max|g_k| * sqrt(d_head)        (`logit_bound`)

whatever the weights before it; only the gains can raise the bound. Without QK-norm nothing
bounds the logits but the size of the weights.

`logit_growth` trains the same tiny pre-LN model (one block, the course's own LayerNorm) with and
without QK-norm on a copy task, at a high learning rate with no warm-up, and records the largest
attention logit at every step. Torch is imported here, so `import normlab` does not import it.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .torch_twins import LayerNorm


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention, with LayerNorm on queries and keys when `qk_norm`."""

    def __init__(self, d_model: int, heads: int, qk_norm: bool):
        super().__init__()
        if d_model % heads:
            raise ValueError(f"d_model ({d_model}) must be a multiple of heads ({heads})")
        self.heads, self.d_head = heads, d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        # QK-norm: one LayerNorm over each head's d_head features, gain only (no bias)
        self.q_norm = LayerNorm(self.d_head, bias=False) if qk_norm else None
        self.k_norm = LayerNorm(self.d_head, bias=False) if qk_norm else None
        self.largest_logit = float("nan")  # the last forward's, over every allowed (i, j)

    def logits(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The attention logits (B, heads, T, T), future masked to -inf, and the values."""
        batch, tokens, d_model = x.shape
        q, k, v = (
            part.view(batch, tokens, self.heads, self.d_head).transpose(1, 2)  # (B, h, T, dh)
            for part in self.qkv(x).split(d_model, dim=-1)
        )
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)  # each head's query and key: mean 0, RMS 1
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)  # (B, h, T, T)
        future = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)  # j > i
        return scores.masked_fill(future, float("-inf")), v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores, v = self.logits(x)
        allowed = torch.isfinite(scores)  # the causal pairs j <= i
        self.largest_logit = scores.detach()[allowed].abs().max().item()
        y = scores.softmax(dim=-1) @ v  # (B, h, T, dh)
        return self.out(y.transpose(1, 2).flatten(2))  # (B, T, d)

    def logit_bound(self) -> float:
        """max|g_q| * max|g_k| * sqrt(d_head): no logit can be larger (QK-norm only)."""
        if self.q_norm is None:
            raise ValueError("without QK-norm the logits have no bound but the weights' size")
        gains = self.q_norm.weight.abs().max() * self.k_norm.weight.abs().max()
        return gains.item() * math.sqrt(self.d_head)


class PreLNBlock(nn.Module):
    """x <- x + attention(LN(x)), then x <- x + FFN(LN(x)): chapter 8's pre-LN block."""

    def __init__(self, d_model: int, heads: int, qk_norm: bool):
        super().__init__()
        self.ln_attn, self.ln_ffn = LayerNorm(d_model), LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, heads, qk_norm)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_attn(x))  # (B, T, d)
        return x + self.ffn(self.ln_ffn(x))


class TinyLM(nn.Module):
    """A pre-LN causal language model: embeddings, `layers` blocks, a final LayerNorm."""

    def __init__(self, vocab: int, tokens: int, d_model: int, heads: int, layers: int, qk_norm):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(tokens, d_model)
        self.blocks = nn.ModuleList(PreLNBlock(d_model, heads, qk_norm) for _ in range(layers))
        self.final_ln = LayerNorm(d_model)
        self.readout = nn.Linear(d_model, vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1]))  # (B, T, d)
        for block in self.blocks:
            x = block(x)
        return self.readout(self.final_ln(x))  # (B, T, vocab)


def copy_batch(generator: torch.Generator, batch: int, half: int, vocab: int) -> torch.Tensor:
    """Sequences of `half` random tokens, then the same tokens again: shape (batch, 2 * half)."""
    first = torch.randint(vocab, (batch, half), generator=generator)
    return torch.cat([first, first], dim=1)


def logit_growth(
    qk_norm: bool,
    *,
    lr: float = 3e-2,
    steps: int = 100,
    seed: int = 0,
    d_model: int = 32,
    heads: int = 2,
    layers: int = 1,
    batch: int = 16,
    half: int = 8,
    vocab: int = 32,
) -> dict[str, np.ndarray]:
    """Train `TinyLM` on the copy task with AdamW at `lr` (no warm-up, no weight decay).

    The model predicts the second half of each sequence, which it can only do by attending
    `half` positions back. Returns, for steps 0 .. steps - 1, "largest_logit" (the largest
    attention logit in size, over every layer, head and allowed pair of the step's batch) and
    "loss", both before that step's update; with QK-norm also "bound", the largest
    `logit_bound` of the layers at that moment, which no logit of the step can exceed.
    """
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = TinyLM(vocab, 2 * half - 1, d_model, heads, layers, qk_norm)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    found: dict[str, list] = {"largest_logit": [], "loss": []} | ({"bound": []} if qk_norm else {})
    for _ in range(steps):
        ids = copy_batch(generator, batch, half, vocab)  # (B, 2 * half)
        logits = model(ids[:, :-1])  # (B, 2 * half - 1, vocab): next token at each position
        copied = logits[:, half - 1 :]  # the positions whose next token is a copy
        loss = nn.functional.cross_entropy(copied.reshape(-1, vocab), ids[:, half:].reshape(-1))
        found["largest_logit"].append(max(block.attn.largest_logit for block in model.blocks))
        found["loss"].append(loss.item())
        if qk_norm:  # the bound of the weights this step's logits were computed with
            found["bound"].append(max(block.attn.logit_bound() for block in model.blocks))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {key: np.array(values) for key, values in found.items()}
