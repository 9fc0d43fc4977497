"""ps3_axes: batch-norm for contrast, and the student's own witness.

`batch_norm(x, gamma, beta, eps=1e-5)` standardizes each feature over the batch (Ioffe and
Szegedy, 2015, training mode), the axis turned ninety degrees from LayerNorm (Ba, Kiros and
Hinton, 2016, arXiv:1607.06450). `witness(norm_fn) -> bool`, the student's audit, must say True
for a correct LayerNorm and False for each planted wrong one: normlab's red team (visible) and
more that only the graders hold (hidden), so recognising the red team by name cannot pass.
Part C, `batch_norm_forward`'s running statistics, is `ps3_running`.
"""

from __future__ import annotations

from dataclasses import replace

from normlab_sandbox.cases import Case

from . import normchecks, ps3_running
from .evidence import failure_of_call, shown_type
from .judges import each_case
from .normchecks import BATCH_NORM
from .spec import CheckSpec, check_spec, registry

ASSIGNMENT = "ps3_axes"

# grade_id -> (points, what it catches, the red team's planted LayerNorms it runs, what a
# witness should test); at grading it also runs planted LayerNorms only the answer key has
CATCHES = {
    "witness_catches_axis": (
        2,
        "a wrong axis",
        ("red_team.wrong_axis", "red_team.batch_axes", "red_team.joint_token_feature"),
        "change one record and check that no other record's output moves, and that a record "
        "alone gives what it gives inside the batch",
    ),
    "witness_catches_sample_variance": (
        2,
        "the sample variance (d - 1)",
        ("red_team.sample_variance",),
        "check that every output record has variance 1 (population variance: divide by d)",
    ),
    "witness_catches_eps": (
        2,
        "eps outside the square root",
        ("red_team.eps_outside_sqrt",),
        "feed a record of tiny variance (below eps) and a constant record: the output variance "
        "must be var / (var + eps), and the constant record must give 0",
    ),
    "witness_catches_centering": (
        1,
        "a missing centring",
        ("red_team.rms_in_place_of_ln",),
        "check that every output record has mean 0",
    ),
    "witness_catches_cancellation": (
        1,
        "a one-pass variance that cancels",
        ("red_team.one_pass_variance",),
        "shift the records far from zero (say by 1e6 standard deviations, or 1e4 in float32): "
        "the output must not move",
    ),
}


def _read_verdict(case: Case, result) -> tuple[bool | None, str | None]:
    """Reader: the witness's True or False, or the message."""
    problem = failure_of_call("witness", case, result)
    if problem:
        if case.tag == "planted":
            advice = " A witness reports what it sees: return False instead of raising."
            problem = replace(problem, message=problem.message + advice)
        return None, problem
    if result.output_type not in ("bool", "numpy.bool", "numpy.bool_"):
        return None, f"witness must return True or False; it returned {shown_type(result)}."
    return bool(result.output), None


def _accepts(seen):
    if seen.value is not True:
        return (
            "False alarm: your witness returned False for a correct LayerNorm (mean and "
            "population variance over the last axis, eps inside the square root). Loosen "
            "the tolerance that fails (float64 outputs agree to about 1e-12; variances of "
            "tiny records are var / (var + eps), not 1)."
        )
    return None


def _catch_spec(grade_id: str) -> CheckSpec:
    points, caught, _, hint = CATCHES[grade_id]

    def rule(seen):
        case, said = seen.case, seen.value
        if case.tag == "correct" and said is not True:
            return (
                "Your witness also returns False for a correct LayerNorm, so its alarm "
                "proves nothing: make it accept the correct one first."
            )
        if case.tag == "planted" and said is not False:
            return f"Missed: your witness returned True for {case.label}. To catch it, {hint}."
        return None

    return check_spec(
        grade_id,
        "witness",
        each_case(_read_verdict, rule),
        f"witness catches {caught}",
        misconception=f"the witness misses {caught}",
        points=points,
    )


CHECKS = registry(
    ASSIGNMENT,
    normchecks.axis_spec(BATCH_NORM, "bn_axis", points=3),
    normchecks.population_variance_spec(BATCH_NORM, "bn_population_variance", points=1),
    normchecks.eps_placement_spec(BATCH_NORM, "bn_eps_placement", points=1),
    normchecks.gain_and_bias_spec(BATCH_NORM, "bn_gain_and_bias", points=1),
    normchecks.batch_of_one_spec(BATCH_NORM, "bn_batch_of_one", points=2),
    normchecks.dtype_and_shape_spec(BATCH_NORM, "bn_dtype_and_shape", points=1),
    normchecks.input_untouched_spec(BATCH_NORM, "bn_input_untouched", points=1),
    normchecks.reference_reuse_spec(BATCH_NORM, "bn_reference_reuse", points=2),
    check_spec(
        "witness_accepts_layer_norm",
        "witness",
        each_case(_read_verdict, _accepts),
        "witness accepts a correct LayerNorm",
        misconception="the witness rejects a correct LayerNorm",
        points=3,
    ),
    *(_catch_spec(grade_id) for grade_id in CATCHES),
    normchecks.reuse_spec(
        "witness_reference_reuse",
        "witness",
        points=2,
        library="normlab's audit or a library",
        summary="witness written by hand",
        misconception="the witness calls normlab's audit or a library",
    ),
    *ps3_running.SPECS,
)
