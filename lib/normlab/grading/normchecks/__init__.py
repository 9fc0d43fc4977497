"""Check builders shared by every normalization the students write.

LayerNorm (ps2), batch-norm (ps3) and RMSNorm (ps4) are one formula with
different choices (see `normlab.grading.variants`), so their grade cells are built
from the same pieces, each reading one choice or one promise:

    axis            statistics over the right axes, for any number of leading axes
    centering       subtract the mean (LayerNorm) or not (RMSNorm)
    divisor         population variance / mean square: divide by n, not n - 1
    eps             eps inside the square root, the argument honoured, the default right
    affine          gamma (and beta) per feature, after normalizing
    independence    no record changes another, alone = inside a batch, no state
    dtype_and_shape a NumPy array of the input's shape and float dtype
    input_untouched the arguments are not written into
    cancellation    float32 far from zero (offset 1e4) as good as near zero (the numerics cell)
    reuse           no library normalization called
    batch_of_one    (batch-norm) a single record raises ValueError

Judges that read a choice ask which members of the family the student's output
matches; when it matches none (a bug the family does not know), they fall back on
the property itself. Either way a bug costs the cells of its own misconception.

One module per misconception above, named as in the table; besides them
`kind` (`NormKind`: what the student's function should be, and `call`, a case
that calls it) and `family_judge` (the judge of the cells that read a choice).
"""

from __future__ import annotations

from .affine import affine_spec
from .axis import axis_spec
from .batch_of_one import batch_of_one_spec
from .cancellation import cancellation_spec
from .centering import centering_spec
from .divisor import divisor_spec
from .dtype_and_shape import dtype_shape_spec
from .eps import eps_spec
from .independence import independence_spec
from .input_untouched import untouched_spec
from .kind import BATCH_NORM, LAYER_NORM, RMS_NORM, NormKind
from .reuse import no_reuse, reuse_spec

__all__ = [
    "BATCH_NORM",
    "LAYER_NORM",
    "RMS_NORM",
    "NormKind",
    "affine_spec",
    "axis_spec",
    "batch_of_one_spec",
    "centering_spec",
    "divisor_spec",
    "dtype_shape_spec",
    "eps_spec",
    "independence_spec",
    "no_reuse",
    "cancellation_spec",
    "reuse_spec",
    "untouched_spec",
]
