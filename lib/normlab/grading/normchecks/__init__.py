"""Check builders shared by every normalization the students write.

LayerNorm (ps2), batch-norm (ps3) and RMSNorm (ps4) are one formula with different choices
(`normlab.grading.formulas`), so their cells are built from the same pieces: one module per
cell, named after its default grade_id, with a builder `<module>_spec(kind, grade_id=<module>,
*, points)`; `kind` says what the student's function should be (`kind.NormKind`), `formula_match`
judges the cells that read a choice. `like_the_input_spec`, `untouched_spec` and `reuse_spec`
also serve functions called otherwise (ps7's group norm, ps9, the gradients).
"""

from __future__ import annotations

from .axis import axis_spec
from .batch_of_one import batch_of_one_spec, refuses_one_record
from .centering import centering_spec
from .dtype_and_shape import dtype_and_shape_spec, like_the_input_spec
from .eps_placement import eps_placement_spec
from .gain_and_bias import gain_and_bias_spec
from .independence import independence_spec
from .input_untouched import input_untouched_spec, untouched, untouched_spec
from .kind import BATCH_NORM, LAYER_NORM, RMS_NORM
from .numerics import numerics_spec
from .population_variance import population_variance_spec
from .reference_reuse import no_reuse, reference_reuse_spec, reuse_spec

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
    "untouched",
    "untouched_spec",
]
