"""The batch-size sweep: batch-norm against LayerNorm, from batches of 2 to 128.

CS231n's assignment 2 trains the same network with batch-norm and with LayerNorm at several
batch sizes. Batch-norm's statistics come from the batch (Ioffe and Szegedy, 2015,
arXiv:1502.03167), so a small batch gives it noisy statistics in training and running averages
that describe a different function at evaluation; LayerNorm's come from each record alone (Ba,
Kiros and Hinton, 2016, arXiv:1607.06450), whatever the batch. Every run takes the same number
of steps at the same learning rate, so only the batch size and the norm change.
"""

from __future__ import annotations

from .classifier import ClassifierRun, train_classifier


def batch_size_sweep(
    norms=("batch_norm", "layer_norm"),
    batch_sizes=(2, 4, 8, 16, 32, 64, 128),
    seeds=(0,),
    **train_kwargs,
) -> list[ClassifierRun]:
    """One `train_classifier` run per (norm, batch size, seed), in that nested order."""
    if not norms or not batch_sizes or not seeds:
        raise ValueError("norms, batch_sizes and seeds must each name at least one value")
    return [
        train_classifier(norm, batch_size=b, seed=s, **train_kwargs)
        for norm in norms
        for b in batch_sizes
        for s in seeds
    ]
