"""ps4_rmsnorm: the student writes `rms_norm(x, gamma, eps=1e-6)` and counts parameters.

RMSNorm (Zhang and Sennrich, 2019, arXiv:1910.07467) keeps only the rescaling of
LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450):
gamma * x / sqrt(mean(x^2) + eps), no mean subtracted, no bias. Its cells are the
shared builders of `normlab.grading.normchecks` with RMSNorm's choices.
"""

from __future__ import annotations

from . import normchecks
from .normchecks import RMS_NORM
from .spec import registry
from .values import number, value_spec

ASSIGNMENT = "ps4_rmsnorm"
N_LAYERS = 12
D_MODEL = 768
N_NORMS = 2 * N_LAYERS + 1  # two per block (attention, MLP) and a final one


def _param_counts(seen):
    ln, problem = number("ln_total", seen.value["ln_total"])
    if problem:
        return problem
    rms, problem = number("rms_total", seen.value["rms_total"])
    if problem:
        return problem
    want_ln, want_rms = N_NORMS * 2 * D_MODEL, N_NORMS * D_MODEL
    if ln == want_ln and rms == want_rms:
        return None
    if ln == 2 * N_LAYERS * 2 * D_MODEL or rms == 2 * N_LAYERS * D_MODEL:
        return f"Count the final norm too: {N_NORMS} norms in all (two per block, plus one)."
    if ln == N_NORMS * D_MODEL:
        return "ln_total counts the gains only: LayerNorm learns a gain and a bias, 2 d_model."
    if rms == want_ln:
        return "rms_total counts a bias: RMSNorm has a gain per feature and no bias, d_model."
    return (
        f"ln_total = {ln:g}, rms_total = {rms:g}: with {N_NORMS} norms of d_model = {D_MODEL}, "
        f"LayerNorm learns {N_NORMS} x 2 x {D_MODEL} and RMSNorm {N_NORMS} x {D_MODEL}."
    )


CHECKS = registry(
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
    ),
)
