"""ps3_axes' batteries: batch-norm's cells (`norm`), the witness's, and Part C's running
statistics (`batch_norm_forward`, in training and in eval).

A witness is run on `Ref`s (`normlab.answer_key.trusted`): a correct LayerNorm and normlab's
red team in the visible battery; a second correct one and planted ones only the answer key has
in the hidden one.
"""

from __future__ import annotations

from functools import partial

from normlab_sandbox.cases import Case, Ref

from ...grading.ps3_axes import CATCHES, CHECKS
from ...grading.ps3_running import call as forward_call
from ..random_inputs import F32, F64, each, messy, signed_affine

_PLANTED_WORDS = {
    "red_team.wrong_axis": "normalizes down the token axis",
    "red_team.batch_axes": "normalizes each feature across the batch (batch-norm)",
    "red_team.joint_token_feature": "shares one mean and variance across a sequence",
    "red_team.sample_variance": "divides by d - 1",
    "red_team.eps_outside_sqrt": "adds eps to the standard deviation",
    "red_team.one_pass_variance": "computes the variance as E[x^2] - E[x]^2",
    "red_team.rms_in_place_of_ln": "skips subtracting the mean",
}


# what only the hidden battery runs (see the docstring), the planted ones with their words
GRADER_ONLY = {
    CHECKS.cell.witness_accepts_layer_norm: {"layer_norm_alt": ""},
    CHECKS.cell.witness_catches_axis: {
        "planted.first_axis": "normalizes down axis 0",
        "planted.whole_tensor": "uses one mean and variance for the whole tensor",
    },
    CHECKS.cell.witness_catches_sample_variance: {
        "planted.mean_abs_deviation": "divides by the mean absolute deviation"
    },
    CHECKS.cell.witness_catches_eps: {"planted.no_eps": "has no eps at all"},
    CHECKS.cell.witness_catches_centering: {"planted.median_centred": "centres on the median"},
    CHECKS.cell.witness_catches_cancellation: {
        "planted.one_pass_float32": "computes E[x^2] - E[x]^2 in float32"
    },
}


def _witness_case(ref: str, tag: str, words: str = "") -> Case:
    words = words or _PLANTED_WORDS.get(ref)
    label = f"a LayerNorm that {words}" if words else "a correct LayerNorm"
    return Case("witness", "call", (Ref(ref),), tag=tag, label=label, meta={"ref": ref})


def _accepts_cases(rng, hidden: bool) -> list[Case]:
    more = GRADER_ONLY[CHECKS.cell.witness_accepts_layer_norm] if hidden else {}
    return [_witness_case(ref, "correct") for ref in ("layer_norm", *more)]


def _catches(spec, rng, hidden: bool) -> list[Case]:
    """A correct LayerNorm, then the catch cell's planted ones (CATCHES'; GRADER_ONLY's too)."""
    planted = dict.fromkeys(CATCHES[spec.grade_id][2], "") | (GRADER_ONLY[spec] if hidden else {})
    cases = [_witness_case(ref, "planted", words) for ref, words in planted.items()]
    return [_witness_case("layer_norm", "correct"), *cases]


def _reuse_cases(rng, hidden: bool) -> list[Case]:
    return [_witness_case("layer_norm", "correct"), _witness_case("red_team.wrong_axis", "x")]


BATTERIES = {
    CHECKS.cell.witness_accepts_layer_norm: _accepts_cases,
    **{CHECKS[grade_id]: partial(_catches, CHECKS[grade_id]) for grade_id in CATCHES},
    CHECKS.cell.witness_reference_reuse: _reuse_cases,
}


# -- Part C: batch_norm_forward, running statistics (`normlab.grading.ps3_running`) -----------


def _forward(rng, shape, momentum, training, dtype=F64, tag="forward"):
    """A call of batch_norm_forward on messy records, gamma of both signs, and running
    statistics unlike the batch's (so eval with the batch's own shows)."""
    d = shape[-1]
    x = messy(rng, shape, spread=(0.5, 5.0)).astype(dtype)
    gamma, beta = (p.astype(dtype) for p in signed_affine(rng, d))
    running = rng.normal(scale=3.0, size=d).astype(dtype), rng.uniform(0.3, 4.0, d).astype(dtype)
    return forward_call(x, gamma, beta, *running, momentum=momentum, training=training, tag=tag)


def _setup(rng, setup, **how):
    """`_forward` on a setup (shape, momentum[, training[, dtype[, tag]]]); momentum never 0.5,
    where both conventions agree."""
    return _forward(rng, *setup, **how)


TRAINING = (
    [((6, 4), 0.1), ((2, 3, 5), 0.3)],
    [((4, 4), 0.05), ((3, 2, 2, 3), 0.2), ((8, 6), 0.9), ((2, 5), 0.1)],
)
EVAL = (
    [((5, 4), 0.1), ((2, 3, 3), 0.1)],
    [((4, 4), 0.2), ((2, 2, 2, 5), 0.1), ((7, 3), 0.3)],
)
BATTERIES |= {
    CHECKS.cell.bnf_momentum: each(_setup, *TRAINING, training=True),
    CHECKS.cell.bnf_running_var_unbiased: each(_setup, *TRAINING, training=True),
    CHECKS.cell.bnf_train_population_variance: each(_setup, *TRAINING, training=True),
    CHECKS.cell.bnf_eval_running_stats: each(_setup, *EVAL, training=False),
    CHECKS.cell.bnf_eval_frozen: each(_setup, *EVAL, training=False),
    CHECKS.cell.bnf_batch_of_one_training: each(
        _setup,
        [((1, 5), 0.1, True, F64, "one"), ((2, 5), 0.1, True, F64, "two")],
        [((1, 1, 4), 0.1, True, F64, "one")],
    ),
    CHECKS.cell.bnf_batch_of_one_eval: each(
        _setup, [((1, 5), 0.1, False)], [((1, 1, 4), 0.1, False), ((1, 3), 0.1, False)], tag="one"
    ),
    CHECKS.cell.bnf_dtype_and_shape: each(
        _setup,
        [((5, 4), 0.1, True, F64), ((2, 3, 6), 0.1, True, F32), ((4, 3), 0.1, False, F32)],
        [((3, 3), 0.1, False, F32), ((2, 2, 5), 0.1, False, F64), ((6, 6), 0.1, True, F32)],
        tag="dtype",
    ),
    CHECKS.cell.bnf_input_untouched: each(
        _setup, [((3, 5), 0.1, True), ((4, 3), 0.1, False)], [((2, 3, 4), 0.1, True)], tag="io"
    ),
    CHECKS.cell.bnf_reference_reuse: each(
        _setup, [((3, 5), 0.1, True), ((4, 4), 0.1, False)], [((2, 3, 4), 0.1, True)], tag="reuse"
    ),
}
