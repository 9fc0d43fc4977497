"""ps7_family: group norm (`ps7_group_norm`; Wu and He, 2018, arXiv:1803.08494) and batch-norm's
backward (`ps7_backward`; Ioffe and Szegedy, 2015, arXiv:1502.03167), one assignment; each of
the two modules says what the student writes."""

from __future__ import annotations

from . import ps7_backward, ps7_group_norm
from .spec import registry

ASSIGNMENT = "ps7_family"

CHECKS = registry(ASSIGNMENT, *ps7_group_norm.SPECS, *ps7_backward.SPECS)
