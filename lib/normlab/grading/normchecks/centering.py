"""centering: subtract the mean (LayerNorm, batch-norm) or not (RMSNorm)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from normlab_sandbox.cases import Case

from .. import variants
from ..evidence import fmt, record, where
from ..random_inputs import messy
from ..spec import CheckSpec, check_spec
from .family_judge import evidence_of_difference, family_judge
from .kind import NormKind, call


def centering_spec(kind: NormKind, grade_id: str = "centering", *, points: float) -> CheckSpec:
    def make(rng, hidden: bool) -> list[Case]:
        # records whose mean is far from zero relative to their spread: centring shows
        shapes = [(3, 5)] + ([(2, 3, 6), (5, 5)] if hidden else [])
        cases = [call(kind, messy(rng, s, offset=6.0), tag="centering") for s in shapes]
        return [call(kind, np.array([[1.0, 2.0, 3.0, 4.0]]), tag="centering"), *cases]

    def accept(v, case):
        return v.center == kind.center

    def explain(v, case, x, y, result):
        z = variants.normalize(x, replace(v, center=kind.center), case.meta["eps"])
        evidence = evidence_of_difference(y, z)
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

    def fallback(case, x, y, result):
        if kind.center:
            axes = kind.correct_axes(x.ndim)
            mean = y.mean(axis=axes)
            bad = ~(np.abs(mean) <= 1e-6 * (1 + np.abs(y).max()))
            if bad.any():
                r = np.argwhere(bad)[0]
                return (
                    f"No centring: for {where(case)}, output record {record(r)} has mean "
                    f"{fmt(mean[tuple(r)])}, not 0: subtract each record's mean."
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

    summary = "subtracts the mean" if kind.center else "does not subtract the mean"
    judge = family_judge(kind, accept, explain, fallback)
    return check_spec(grade_id, kind.function, make, judge, summary, points=points)
