"""Training runs for the training chapter: the claims of the other chapters, measured.

Small, seeded, CPU-only runs on data the course makes in code (nothing is downloaded):

    data         two synthetic tasks: interleaved spirals, and reversing a token sequence
    mlp          one small tanh network with no norm, batch-norm, LayerNorm or RMSNorm
    layer_stats  per-layer activations and their gradients, as in Karpathy's makemore
    classifier   train the network on the spirals; batch-norm's train/eval gap
    curves       smooth a loss curve; the first step it gets below a level; its tail's mean
    grid         the recorded sweep of init scale, depth and learning rate, per norm
    parallel     independent runs side by side, one per CPU core
    schedule     the linear learning-rate warm-up
    sequence     a small pre-LN or post-LN transformer trained with or without warm-up

Sources: Ba, Kiros and Hinton (2016, arXiv:1607.06450), LayerNorm; Ioffe and Szegedy (2015,
arXiv:1502.03167), batch-norm; Zhang and Sennrich (2019, arXiv:1910.07467), RMSNorm; Vaswani
et al. (2017, arXiv:1706.03762), post-LN and warm-up; Xiong et al. (2020, arXiv:2002.04745),
pre-LN; Santurkar et al. (2018, arXiv:1805.11604), what batch-norm does to optimization.

Torch is imported here, so `import normlab` does not import this package; ask for it with
`from normlab import training`.
"""

from .classifier import ClassifierRun, train_classifier
from .curves import first_step_below, smooth, tail_mean
from .data import reversal_batch, spirals
from .layer_stats import LayerStats, layer_stats
from .mlp import MLP, NORMS
from .parallel import run_all
from .schedule import warmup_lr
from .sequence import SequenceRun, train_sequence_model

__all__ = [
    "MLP",
    "NORMS",
    "ClassifierRun",
    "LayerStats",
    "SequenceRun",
    "first_step_below",
    "layer_stats",
    "reversal_batch",
    "run_all",
    "smooth",
    "spirals",
    "tail_mean",
    "train_classifier",
    "train_sequence_model",
    "warmup_lr",
]
