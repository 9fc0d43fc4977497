"""normlab: the reference implementation behind the LayerNorm course.

Layer normalization (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) in NumPy, with
the functions the course compares it to (batch-norm, RMSNorm, GroupNorm, and Dynamic
Tanh, which keeps none of the statistics), its
backward pass, a witness that audits any normalization function, and planted wrong
implementations for it to catch.

    import normlab
    normlab.layer_norm([1.0, 2.0, 3.0, 4.0])      # about [-1.3416, -0.4472, 0.4472, 1.3416]
    normlab.row_stats([1.0, 2.0, 3.0, 4.0])       # (2.5, 1.25): population variance
    normlab.audit.audit(normlab.layer_norm).ok    # True

Statistics are always over the last axis, with the population variance. Torch
twins live in `normlab.torch_twins`, imported only when asked for.
"""

from . import audit, red_team
from .backward import batch_norm_backward, layer_norm_backward
from .batch_norm import BatchNorm, batch_norm, batch_norm_forward
from .dyt import dyt, dyt_backward
from .group_norm import group_norm
from .layer_norm import layer_norm
from .params import param_count
from .rms_norm import rms_norm
from .stats import row_stats

__all__ = [
    "BatchNorm",
    "audit",
    "batch_norm",
    "batch_norm_backward",
    "batch_norm_forward",
    "dyt",
    "dyt_backward",
    "group_norm",
    "layer_norm",
    "layer_norm_backward",
    "param_count",
    "red_team",
    "rms_norm",
    "row_stats",
]
__version__ = "0.1.0"
