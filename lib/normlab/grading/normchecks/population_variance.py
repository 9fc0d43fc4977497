"""population_variance: the population variance / mean square, dividing by n, not n - 1."""

from __future__ import annotations

import numpy as np

from ..evidence import first_beyond, fmt, record, where
from ..spec import CheckSpec
from .formula_match import (
    choice_cell,
    evidence_of_difference,
    output_of,
)
from .kind import NormKind


def population_variance_spec(
    kind: NormKind, grade_id: str = "population_variance", *, points: float
) -> CheckSpec:
    stat = kind.statistic_name
    count = "the number of records, not one less" if kind.leading_axes else "d, not d - 1"

    def explain(seen, closest):
        case, x, y = seen.case, kind.x_of(seen.case), seen.value
        if closest is None:
            m2 = kind.statistic(y)
            r = first_beyond(m2 - 1, 1e-4)
            if r is None:
                return None
            return (
                f"Scale: for {where(case)}, output {kind.unit} {record(r)} has {stat} "
                f"{fmt(m2[r])}, not 1: divide by the square root of the population {stat} "
                f"(divide by n, not n - 1)."
            )
        n = int(np.prod([x.shape[a] for a in closest.axes]))
        evidence = evidence_of_difference(y, output_of(seen, closest, divisor="n"))
        if closest.divisor == "n-1":
            return (
                f"Sample variance: for {where(case)}, {kind.function} divides the sum of squares "
                f"by n - 1 = {n - 1} (np.var(ddof=1), torch.var's default). {kind.title} uses "
                f"the population {stat}: divide by n = {n}, so every output is "
                f"sqrt({n - 1}/{n}) = {np.sqrt((n - 1) / n):.4f} times too small." + evidence
            )
        return (
            f"Sum of squares: for {where(case)}, {kind.function} divides by the root of the "
            f"sum of squares (an L2 norm), not of their mean: the {stat} divides by n = {n}, "
            f"so your outputs are sqrt({n}) times too small." + evidence
        )

    return choice_cell(
        population_variance_spec,
        kind,
        grade_id,
        "divisor",
        explain,
        f"population {stat}: divide by {count}",
        misconception=f"the sample {stat} (n - 1), or a sum of squares",
        points=points,
    )
