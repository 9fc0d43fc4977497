"""ps7_family: group norm, and batch-norm's backward.

The student writes `group_norm(x, num_groups, gamma, beta, eps=1e-5)` for (N, C, *spatial)
input (Wu and He, 2018, arXiv:1803.08494: groups of C / num_groups contiguous channels, as
`torch.nn.functional.group_norm`) and `batch_norm_backward(dy, x, gamma, eps=1e-5) ->
(dx, dgamma, dbeta)`, the gradient of training-mode batch-norm (Ioffe and Szegedy, 2015,
arXiv:1502.03167), LayerNorm's backward (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) with
its means over the batch. Their cells are in `ps7_group_norm` and `ps7_backward`.
"""

from __future__ import annotations

from . import ps7_backward, ps7_group_norm
from .spec import registry

ASSIGNMENT = "ps7_family"

CHECKS = registry(ASSIGNMENT, *ps7_group_norm.SPECS, *ps7_backward.SPECS)
