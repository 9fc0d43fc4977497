"""Check builders shared by every normalization the students write.

LayerNorm (ps2), batch-norm (ps3) and RMSNorm (ps4) are one formula with
different choices (see `normlab.grading.formulas`), so their grade cells are built
from the same pieces, each reading one choice or one promise:

    axis                 statistics over the right axes, for any number of leading axes
    centering            subtract the mean (LayerNorm) or not (RMSNorm)
    population_variance  the population variance / mean square: divide by n, not n - 1
    eps_placement        eps inside the square root, the argument honoured, the default right
    gain_and_bias        gamma (and beta) per feature, after normalizing
    independence         no record changes another, alone = inside a batch, no state
    dtype_and_shape      a NumPy array of the input's shape and float dtype
    input_untouched      the arguments are not written into
    numerics             float32 far from zero (offset 1e4) as good as near zero
    reference_reuse      no library normalization called
    batch_of_one         (batch-norm) a single record raises ValueError

Judges that read a choice ask which members of the family the student's output
matches; when it matches none (a bug the family does not know), they fall back on
the property itself. Either way a bug costs the cells of its own misconception.

One module per cell above, named after its default grade_id, with a builder
`<module>_spec(kind, grade_id=<module>, *, points)`; besides them `kind` (`NormKind`: what
the student's function should be, and `call`, a case that calls it) and `formula_match` (the judge
of the cells that read a choice). The rules of dtype_and_shape (`like_the_input`) and
input_untouched (`untouched`) and the reader of reference_reuse (`no_reuse`) also serve
normalizations called otherwise (ps7's group norm, ps5's and ps7's gradients).
"""

from __future__ import annotations

from .axis import axis_spec
from .batch_of_one import batch_of_one_spec, refuses_one_record
from .centering import centering_spec
from .dtype_and_shape import dtype_and_shape_spec, like_the_input
from .eps_placement import eps_placement_spec
from .gain_and_bias import gain_and_bias_spec
from .independence import independence_spec
from .input_untouched import input_untouched_spec, untouched, untouched_spec
from .kind import BATCH_NORM, LAYER_NORM, RMS_NORM, NormKind
from .numerics import numerics_spec
from .population_variance import population_variance_spec
from .reference_reuse import no_reuse, reference_reuse_spec, reuse_spec

__all__ = [
    "BATCH_NORM",
    "LAYER_NORM",
    "RMS_NORM",
    "NormKind",
    "axis_spec",
    "batch_of_one_spec",
    "refuses_one_record",
    "centering_spec",
    "dtype_and_shape_spec",
    "eps_placement_spec",
    "gain_and_bias_spec",
    "independence_spec",
    "input_untouched_spec",
    "like_the_input",
    "no_reuse",
    "numerics_spec",
    "population_variance_spec",
    "reference_reuse_spec",
    "reuse_spec",
    "untouched",
    "untouched_spec",
]
