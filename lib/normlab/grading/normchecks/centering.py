"""centering: subtract the mean (LayerNorm, batch-norm) or not (RMSNorm)."""

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


def centering_spec(kind: NormKind, grade_id: str = "centering", *, points: float) -> CheckSpec:
    def explain(seen, closest):
        case, y = seen.case, seen.value
        if closest is None:
            return _property(kind, case, kind.x_of(seen.case), y)
        evidence = evidence_of_difference(y, output_of(seen, closest, center=kind.center))
        if kind.center:
            return (
                f"No centring: for {where(case)}, {kind.function} does not subtract the mean "
                f"before dividing. That is RMSNorm; {kind.title} subtracts each record's "
                f"own mean first." + evidence
            )
        return (
            f"Centring: for {where(case)}, {kind.function} subtracts the mean. That is "
            f"LayerNorm; RMSNorm divides each record, as it is, by its root mean square." + evidence
        )

    return choice_cell(
        centering_spec,
        kind,
        grade_id,
        "center",
        explain,
        "subtracts the mean" if kind.center else "does not subtract the mean",
        misconception="the mean not subtracted" if kind.center else "the mean subtracted",
        points=points,
    )


def _property(kind: NormKind, case, x, y) -> str | None:
    """No member of the family matches: is the output centred (or, for RMSNorm, unshifted)?"""
    if kind.center:
        axes = kind.correct_axes(x.ndim)
        mean = y.mean(axis=axes)
        r = first_beyond(mean, 1e-6 * (1 + np.abs(y).max()))
        if r is not None:
            return (
                f"No centring: for {where(case)}, output record {record(r)} has mean "
                f"{fmt(mean[r])}, not 0: subtract each record's mean."
            )
        return None
    flat_x, flat_y = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
    for i, (xr, yr) in enumerate(zip(flat_x, flat_y, strict=True)):
        ratio = yr / xr
        if not np.allclose(ratio, ratio[0], rtol=1e-6):
            return (
                f"Centring: for {where(case)}, output record {i} is not the input record "
                f"times one number: RMSNorm must not shift the record."
            )
    return None
