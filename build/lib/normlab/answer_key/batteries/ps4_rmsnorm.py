"""ps4_rmsnorm's batteries: RMSNorm's cells (`norm`), and the parameter counts."""

from __future__ import annotations

from ...grading.normchecks import RMS_NORM
from . import norm
from .values import gets

BATTERIES = {
    **norm.for_kind(
        RMS_NORM,
        {
            "rms_axis": "axis",
            "rms_no_centering": "centering",
            "rms_mean_square": "population_variance",
            "rms_eps": "eps_placement",
            "rms_gain": "gain_and_bias",
            "rms_dtype_and_shape": "dtype_and_shape",
            "rms_input_untouched": "input_untouched",
            "rms_reference_reuse": "reference_reuse",
        },
    ),
    "param_counts": gets("ln_total", "rms_total"),
}
