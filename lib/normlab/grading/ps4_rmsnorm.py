"""ps4_rmsnorm: the student writes `rms_norm(x, gamma, eps=1e-6)` and counts parameters.

RMSNorm (Zhang and Sennrich, 2019, arXiv:1910.07467) keeps only the rescaling of LayerNorm (Ba,
Kiros and Hinton, 2016, arXiv:1607.06450): gamma * x / sqrt(mean(x^2) + eps), no mean, no bias.
"""

from __future__ import annotations

from . import normchecks
from .normchecks import RMS_NORM
from .oracle import ASK
from .spec import registry
from .values import number, value_spec

ASSIGNMENT = "ps4_rmsnorm"
N_LAYERS = 12
D_MODEL = 768
N_NORMS = 2 * N_LAYERS + 1  # two per block (attention, MLP) and a final one
NORMS = ("layer_norm", "rms_norm")  # the reference's param_count of each, asked of the oracle


def _param_counts(seen):
    """The message naming the mistake (never a count: they are the answers)."""
    (ln, problem), (rms, other) = (number(n, seen.value[n]) for n in ("ln_total", "rms_total"))
    if problem or other:
        return problem or other
    per_ln, per_rms = (seen.oracle.reference("param_count", norm, D_MODEL) for norm in NORMS)
    if ln == N_NORMS * per_ln and rms == N_NORMS * per_rms:
        return None
    if ln == (N_NORMS - 1) * per_ln or rms == (N_NORMS - 1) * per_rms:
        return "Count the final norm too: two norms per block, plus one after the last block."
    if ln == N_LAYERS * per_ln or rms == N_LAYERS * per_rms:
        return "Count two norms per block (before attention, before the MLP), not one."
    if ln == N_NORMS * per_rms:
        return "ln_total counts the gains only: LayerNorm with a bias learns a bias vector too."
    if rms == N_NORMS * per_ln:
        return "rms_total counts a bias: RMSNorm learns a gain per feature and no bias."
    return (
        "Count the normalization layers (two per block, one at the end), then the entries each "
        "learns: a gain and a bias of d_model entries for LayerNorm, a gain alone for RMSNorm."
    )


CHECKS = registry(
    ASSIGNMENT,
    normchecks.axis_spec(RMS_NORM, "rms_axis", points=2),
    normchecks.centering_spec(RMS_NORM, "rms_no_centering", points=3),
    normchecks.population_variance_spec(RMS_NORM, "rms_mean_square", points=2),
    normchecks.eps_placement_spec(RMS_NORM, "rms_eps", points=2),
    normchecks.gain_and_bias_spec(RMS_NORM, "rms_gain", points=2),
    normchecks.dtype_and_shape_spec(RMS_NORM, "rms_dtype_and_shape", points=1),
    normchecks.input_untouched_spec(RMS_NORM, "rms_input_untouched", points=1),
    normchecks.reference_reuse_spec(RMS_NORM, "rms_reference_reuse", points=3),
    value_spec(
        "param_counts",
        ("ln_total", "rms_total"),
        _param_counts,
        "parameter counts",
        misconception="the parameter counts of a 12-layer model wrong",
        points=4,
        questions=lambda case: [ASK.reference("param_count", norm, D_MODEL) for norm in NORMS],
    ),
)
