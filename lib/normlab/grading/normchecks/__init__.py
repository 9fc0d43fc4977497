"""Check builders shared by every normalization the students write.

LayerNorm (ps2), batch-norm (ps3) and RMSNorm (ps4) are one formula with different choices
(`normlab.grading.formulas`), so their cells are built from the same pieces: one builder per
cell, `<cell>_spec(kind, grade_id=<cell>, *, points)`, named after its default grade_id; `kind`
says what the student's function should be (`kind.NormKind`). `formula_match` builds the cells
that read a choice, `cells` the others.
"""

from __future__ import annotations

from .cells import (
    batch_of_one_spec,
    dtype_and_shape_spec,
    gain_and_bias_spec,
    independence_spec,
    input_untouched_spec,
    like_the_input_spec,
    no_reuse,
    numerics_spec,
    reference_reuse_spec,
    refuses_one_record,
    reuse_spec,
    untouched_spec,
)
from .formula_match import axis_spec, centering_spec, eps_placement_spec, population_variance_spec
from .kind import BATCH_NORM, LAYER_NORM, RMS_NORM

__all__ = [
    "BATCH_NORM",
    "LAYER_NORM",
    "RMS_NORM",
    "axis_spec",
    "batch_of_one_spec",
    "refuses_one_record",
    "centering_spec",
    "dtype_and_shape_spec",
    "eps_placement_spec",
    "gain_and_bias_spec",
    "independence_spec",
    "input_untouched_spec",
    "like_the_input_spec",
    "no_reuse",
    "numerics_spec",
    "population_variance_spec",
    "reference_reuse_spec",
    "reuse_spec",
    "untouched_spec",
]
