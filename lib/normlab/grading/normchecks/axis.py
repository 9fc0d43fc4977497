"""axis: statistics over the right axes, for any number of leading axes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from normlab_sandbox.cases import Case

from .. import variants
from ..evidence import where
from ..random_inputs import messy
from ..spec import CheckSpec, check_spec
from .family_judge import evidence_of_difference, family_judge
from .kind import NormKind, call


def _axis_property_holds(kind: NormKind, x, y) -> bool:
    """Unknown variant: is each record (batch-norm: each feature) an affine map of itself?"""
    if kind.leading_axes:
        x, y = x.reshape(-1, x.shape[-1]).T, y.reshape(-1, y.shape[-1]).T
    else:
        x, y = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
    for xr, yr in zip(x, y, strict=True):
        design = np.stack([xr, np.ones_like(xr)], axis=1)
        coef, *_ = np.linalg.lstsq(design, yr, rcond=None)
        if not np.all(np.abs(design @ coef - yr) <= 1e-6 * (1 + np.abs(yr).max())):
            return False
    return True


def axis_spec(kind: NormKind, grade_id: str = "axis", *, points: float) -> CheckSpec:
    where_ = "every leading axis" if kind.leading_axes else "the last axis"

    def make(rng, hidden: bool) -> list[Case]:
        shapes = [(4, 5), (2, 3, 4)] if kind.leading_axes else [(3, 5), (2, 3, 4)]
        if hidden:
            shapes += [(6, 6), (2, 3, 2, 5), (3, 1, 7)]
            if not kind.leading_axes:
                shapes += [(7,), (1, 6)]
        return [call(kind, messy(rng, s), tag="axis") for s in shapes]

    def accept(v, case):
        return v.axes == kind.correct_axes(np.ndim(case.args[0]))

    def explain(v, case, x, y, result):
        right = kind.correct_axes(x.ndim)
        z = variants.normalize(x, replace(v, axes=right), case.meta["eps"])
        evidence = evidence_of_difference(y, z)
        return (
            f"Wrong axis: for {where(case)}, {kind.function} takes its statistics over "
            f"{variants.describe_axes(v.axes, x.ndim)}. {kind.title} takes them over "
            f"{variants.describe_axes(right, x.ndim)}, for any number of leading axes "
            f"(use axis=-1{' and keepdims=True' if not kind.leading_axes else ''})." + evidence
        )

    def fallback(case, x, y, result):
        if _axis_property_holds(kind, x, y):
            return None
        return (
            f"Wrong axis: for {where(case)}, the output is not each "
            f"{'feature' if kind.leading_axes else 'record'} rescaled by its own statistics: "
            f"{kind.title} takes its mean and variance over {where_}."
        )

    summary = f"{kind.title}: statistics over {where_}"
    judge = family_judge(kind, accept, explain, fallback)
    return check_spec(grade_id, kind.function, make, judge, summary, points=points)
