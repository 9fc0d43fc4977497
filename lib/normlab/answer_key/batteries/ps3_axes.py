"""ps3_axes' batteries: batch-norm's cells (`norm`) and the witness's.

A witness is run on a correct LayerNorm and on planted wrong ones, each a `Ref` resolved where
the student's code runs (`normlab.answer_key.trusted`): normlab's red team in the visible
battery, and in the hidden one a second correct LayerNorm and further planted ones that exist
only in the answer key, so a witness that recognises the published red team by name cannot
pass.
"""

from __future__ import annotations

from normlab_sandbox.cases import Case, Ref

from ...grading.normchecks import BATCH_NORM
from ...grading.ps3_axes import CATCHES
from . import norm

_PLANTED_WORDS = {
    "red_team.wrong_axis": "normalizes down the token axis",
    "red_team.batch_axes": "normalizes each feature across the batch (batch-norm)",
    "red_team.joint_token_feature": "shares one mean and variance across a sequence",
    "red_team.sample_variance": "divides by d - 1",
    "red_team.eps_outside_sqrt": "adds eps to the standard deviation",
    "red_team.one_pass_variance": "computes the variance as E[x^2] - E[x]^2",
    "red_team.rms_in_place_of_ln": "skips subtracting the mean",
}


def _grader_only(rng, hidden: bool) -> dict[str, dict[str, str]]:
    """What only the hidden battery runs: a second correct LayerNorm for
    witness_accepts_layer_norm, and for each catch cell planted wrong LayerNorms that exist
    only in the graders (`trusted`), with their words; {} for the visible battery."""
    if not hidden:
        return {}
    return {
        "witness_accepts_layer_norm": {"layer_norm_alt": ""},
        "witness_catches_axis": {
            "planted.first_axis": "normalizes down axis 0",
            "planted.whole_tensor": "uses one mean and variance for the whole tensor",
        },
        "witness_catches_sample_variance": {
            "planted.mean_abs_deviation": "divides by the mean absolute deviation"
        },
        "witness_catches_eps": {"planted.no_eps": "has no eps at all"},
        "witness_catches_centering": {"planted.median_centred": "centres on the median"},
        "witness_catches_cancellation": {
            "planted.one_pass_float32": "computes E[x^2] - E[x]^2 in float32"
        },
    }


def _witness_case(ref: str, tag: str, words: str = "") -> Case:
    words = words or _PLANTED_WORDS.get(ref)
    label = f"a LayerNorm that {words}" if words else "a correct LayerNorm"
    return Case("witness", "call", (Ref(ref),), tag=tag, label=label, meta={"ref": ref})


def _accepts_cases(rng, hidden: bool) -> list[Case]:
    more = _grader_only(rng, hidden).get("witness_accepts_layer_norm", {})
    return [_witness_case(ref, "correct") for ref in ("layer_norm", *more)]


def _catch_battery(grade_id: str):
    visible = CATCHES[grade_id][2]

    def make(rng, hidden: bool) -> list[Case]:
        planted = {ref: "" for ref in visible} | _grader_only(rng, hidden).get(grade_id, {})
        cases = [_witness_case(ref, "planted", words) for ref, words in planted.items()]
        return [_witness_case("layer_norm", "correct"), *cases]

    return make


def _reuse_cases(rng, hidden: bool) -> list[Case]:
    return [_witness_case("layer_norm", "correct"), _witness_case("red_team.wrong_axis", "x")]


BATTERIES = {
    **norm.for_kind(
        BATCH_NORM,
        {
            "bn_axis": "axis",
            "bn_population_variance": "population_variance",
            "bn_eps_placement": "eps_placement",
            "bn_gain_and_bias": "gain_and_bias",
            "bn_batch_of_one": "batch_of_one",
            "bn_dtype_and_shape": "dtype_and_shape",
            "bn_input_untouched": "input_untouched",
            "bn_reference_reuse": "reference_reuse",
        },
    ),
    "witness_accepts_layer_norm": _accepts_cases,
    **{grade_id: _catch_battery(grade_id) for grade_id in CATCHES},
    "witness_reference_reuse": _reuse_cases,
}
