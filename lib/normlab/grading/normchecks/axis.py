"""axis: statistics over the right axes, for any number of leading axes."""

from __future__ import annotations

from .. import formulas
from ..evidence import affine_rows, where
from ..spec import CheckSpec
from .formula_match import (
    choice_cell,
    evidence_of_difference,
    output_of,
)
from .kind import NormKind


def axis_spec(kind: NormKind, grade_id: str = "axis", *, points: float) -> CheckSpec:
    where_ = "every leading axis" if kind.leading_axes else "the last axis"

    def explain(seen, closest):
        x, y = kind.x_of(seen.case), seen.value
        if closest is None:  # is each record (batch-norm: each feature) an affine map of itself?
            xs, ys = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
            if affine_rows(xs.T, ys.T) if kind.leading_axes else affine_rows(xs, ys):
                return None
            return (
                f"Wrong axis: for {where(seen.case)}, the output is not each {kind.unit} "
                f"rescaled by its own statistics: {kind.title} takes its mean and variance "
                f"over {where_}."
            )
        right = kind.correct_axes(x.ndim)
        evidence = evidence_of_difference(y, output_of(seen, closest, axes=right))
        return (
            f"Wrong axis: for {where(seen.case)}, {kind.function} takes its statistics over "
            f"{formulas.describe_axes(closest.axes, x.ndim)}. {kind.title} takes them over "
            f"{formulas.describe_axes(right, x.ndim)}, for any number of leading axes "
            f"(use axis=-1{' and keepdims=True' if not kind.leading_axes else ''})." + evidence
        )

    return choice_cell(
        axis_spec,
        kind,
        grade_id,
        "axes",
        explain,
        f"{kind.title}: statistics over {where_}",
        misconception=f"{kind.title}: statistics over the wrong axes",
        points=points,
    )
