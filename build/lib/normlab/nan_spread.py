"""How far one NaN travels in training: from one record to every weight in one step (chapter 11).

A LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) whose variance comes out negative
gives one record of NaN. In the forward pass a linear layer keeps it in that record's row: each
row of x W^T + b reads one record. Training does not. The loss is a mean over the batch, so it
is NaN; the gradient of the weights is a sum over every record, x^T dy, so every entry of it
holds the NaN row's term; one optimizer step then writes NaN into every weight, and the next
batch, however clean, comes out NaN in every row.

`one_step_with_a_nan` runs exactly that with torch's autograd and SGD and counts the NaNs at
each stage. Torch is imported here, so `import normlab` does not import this module.
"""

from __future__ import annotations

import torch
from torch import nn


def _nan_rows(t: torch.Tensor) -> int:
    return int(torch.isnan(t).any(dim=-1).sum())


def one_step_with_a_nan(
    rows: int = 8, d_in: int = 4, d_out: int = 3, lr: float = 0.1, seed: int = 0
) -> dict[str, int | bool]:
    """One SGD step of a linear layer on a batch whose first record holds a NaN.

    Returns the counts: "rows"; "nan_rows_forward", the rows of the layer's output that are
    NaN; "loss_is_nan", of the batch-mean squared error; "weights" and "nan_weight_grads",
    the weight entries and how many of their gradients are NaN; "nan_rows_next_batch", the NaN
    rows of the output on a fresh batch with no NaN, after the step.
    """
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    layer = nn.Linear(d_in, d_out).double()
    x = torch.randn(rows, d_in, generator=generator, dtype=torch.float64)  # (rows, d_in)
    x[0, 0] = float("nan")  # record 0: what a negative variance left behind
    target = torch.randn(rows, d_out, generator=generator, dtype=torch.float64)
    out = layer(x)  # (rows, d_out): row 0 alone is NaN
    loss = nn.functional.mse_loss(out, target)  # the mean over every record: NaN
    loss.backward()  # dW = dy^T x sums over records: NaN everywhere
    grad = layer.weight.grad
    torch.optim.SGD(layer.parameters(), lr=lr).step()
    clean = torch.randn(rows, d_in, generator=generator, dtype=torch.float64)
    with torch.no_grad():
        after = layer(clean)  # (rows, d_out)
    return {
        "rows": rows,
        "nan_rows_forward": _nan_rows(out.detach()),
        "loss_is_nan": bool(torch.isnan(loss)),
        "weights": int(grad.numel()),
        "nan_weight_grads": int(torch.isnan(grad).sum()),
        "nan_rows_next_batch": _nan_rows(after),
    }
