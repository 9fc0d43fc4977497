"""ps7_family's batteries: group norm's (`ps7_group_norm`) and batch-norm's backward's."""

from __future__ import annotations

from . import ps7_backward, ps7_group_norm

BATTERIES = {**ps7_group_norm.BATTERIES, **ps7_backward.BATTERIES}
