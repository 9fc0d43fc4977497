"""ps2_layer_norm's batteries: row_stats' cases, and LayerNorm's cells (`norm`)."""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from ...grading.evidence import fmt
from ...grading.ps2_layer_norm import CHECKS
from ..random_inputs import messy


def _stats_case(x) -> Case:
    x = np.asarray(x, dtype=np.float64)
    label = f"x of shape {x.shape}" if x.ndim > 1 else f"x = {fmt(x)}"
    return Case("row_stats", "call", (x,), tag="stats", label=label)


def _stats_cases(rng, hidden: bool) -> list[Case]:
    cases = [
        _stats_case(np.array([[1.0, 2.0, 3.0, 4.0], [10.0, 0.0, 5.0, 9.0]])),
        _stats_case(messy(rng, (2, 3, 5))),
        _stats_case(np.array([1.0, 2.0, 3.0, 4.0])),  # one record: x.shape[:-1] is ()
        _stats_case(messy(rng, (5, 5))),  # square: the wrong axis keeps the shape
    ]
    return cases + ([_stats_case(messy(rng, (2, 2, 3, 4)))] if hidden else [])


BATTERIES = {
    CHECKS.cell.stats_axis: _stats_cases,
    CHECKS.cell.stats_population_variance: _stats_cases,
    CHECKS.cell.stats_shape: _stats_cases,
    CHECKS.cell.stats_reference_reuse: _stats_cases,
}
