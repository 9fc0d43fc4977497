"""ps1_by_hand: LayerNorm of one record worked by hand, and parameter counts.

The seed's worked example (Ba, Kiros and Hinton, 2016, arXiv:1607.06450, eq. 3):
r = [1, 2, 3, 4] has mean 2.5 and population variance 5/4 = 1.25 (the sample
variance 5/3 is the trap); normalized (eps ignored) it is about
[-1.341641, -0.447214, 0.447214, 1.341641]; eps = 1e-5 inside the square root
shrinks it by sqrt(1.25 / 1.25001). With gain and bias LayerNorm learns 2 d
entries (1024 for d_model = 512), d with the gain only, and RMSNorm d.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .evidence import fmt
from .spec import registry
from .values import close, number, value_spec, vector

ASSIGNMENT = "ps1_by_hand"
R = np.array([1.0, 2.0, 3.0, 4.0])
D_MODEL = 512


def _mean(seen):
    got, problem = number("mean_r", seen.value["mean_r"])
    if problem:
        return problem
    if close(got, 2.5):
        return None
    return f"mean_r = {got:g}, but the mean of r = [1, 2, 3, 4] is (1 + 2 + 3 + 4) / 4."


def _variance(seen):
    got, problem = number("var_r", seen.value["var_r"])
    if problem:
        return problem
    if close(got, 1.25):
        return None
    if close(got, 5 / 3):
        return (
            "Sample variance: var_r = 5/3 divides the squared deviations by d - 1 = 3. "
            "LayerNorm uses the population variance of the record: divide by d = 4."
        )
    if close(got, np.sqrt(1.25)):
        return "var_r is the standard deviation sqrt(1.25); the variance is its square."
    return (
        f"var_r = {got:g}: square the deviations from the mean 2.5, "
        "[2.25, 0.25, 0.25, 2.25], and average them over the d = 4 features."
    )


def _normalized(seen):
    got, problem = vector("normalized_r", seen.value["normalized_r"], 4)
    if problem:
        return problem
    want = (R - 2.5) / np.sqrt(1.25)
    if np.allclose(got, want, rtol=0, atol=1e-6):
        return None
    if np.allclose(got, (R - 2.5) / np.sqrt(5 / 3), atol=1e-6):
        return "normalized_r divides by the sample standard deviation sqrt(5/3); use sqrt(1.25)."
    if np.allclose(got, (R - 2.5) / 1.25, atol=1e-6):
        return "normalized_r divides by the variance 1.25; divide by its square root."
    if np.allclose(got, R / np.sqrt(1.25), atol=1e-6):
        return "normalized_r does not subtract the mean 2.5 first."
    return f"normalized_r = {fmt(got, 7)}; (r - 2.5) / sqrt(1.25) is {fmt(want, 7)}."


def _eps_effect(seen):
    got, problem = vector("normalized_r_eps", seen.value["normalized_r_eps"], 4)
    if problem:
        return problem
    want = seen.oracle.reference("layer_norm", R, eps=1e-5)
    if np.allclose(got, want, rtol=0, atol=1e-9):
        return None
    if np.allclose(got, (R - 2.5) / (np.sqrt(1.25) + 1e-5), rtol=0, atol=1e-9):
        return (
            "eps outside the square root: you divided by sqrt(1.25) + 1e-5. LayerNorm adds eps "
            "to the variance: divide by sqrt(1.25 + 1e-5)."
        )
    if np.allclose(got, (R - 2.5) / np.sqrt(1.25), rtol=0, atol=1e-9):
        return (
            "normalized_r_eps equals the result without eps (to 1e-9): keep all the digits "
            "(compute it in Python): dividing by sqrt(1.25 + 1e-5) shrinks every entry by "
            "a factor of about 1 - 4e-6."
        )
    return f"normalized_r_eps = {fmt(got, 9)}; (r - 2.5) / sqrt(1.25 + 1e-5) is {fmt(want, 9)}."


def _param_counts(seen):
    counts = {}
    for name in ("params_gain_bias", "params_gain_only", "params_rms"):
        got, problem = number(name, seen.value[name])
        if problem:
            return problem
        counts[name] = got
    count = partial(seen.oracle.reference, "param_count")
    want = {
        "params_gain_bias": count("layer_norm", D_MODEL),
        "params_gain_only": count("layer_norm", D_MODEL, bias=False),
        "params_rms": count("rms_norm", D_MODEL),
    }
    for name, expected in want.items():
        if counts[name] != expected:
            why = {
                "params_gain_bias": "a gain and a bias per feature: 2 d_model",
                "params_gain_only": "a gain per feature and no bias: d_model",
                "params_rms": "RMSNorm has a gain per feature and no bias: d_model",
            }[name]
            return f"{name} = {counts[name]:g}, but {why} = {expected} for d_model = {D_MODEL}."
    return None


CHECKS = registry(
    value_spec(
        "mean",
        ("mean_r",),
        _mean,
        "the mean of a record",
        misconception="the mean of a record wrong",
        points=1,
    ),
    value_spec(
        "population_variance",
        ("var_r",),
        _variance,
        "population variance by hand",
        misconception="the variance by hand wrong (the sample variance?)",
        points=2,
    ),
    value_spec(
        "normalized",
        ("normalized_r",),
        _normalized,
        "the normalized record",
        misconception="the normalized record wrong",
        points=2,
    ),
    value_spec(
        "eps_effect",
        ("normalized_r_eps",),
        _eps_effect,
        "eps inside the square root",
        misconception="eps outside the square root, or its effect rounded away",
        points=2,
    ),
    value_spec(
        "param_counts",
        ("params_gain_bias", "params_gain_only", "params_rms"),
        _param_counts,
        "parameter counts name their convention",
        misconception="parameter counts of the wrong convention",
        points=3,
    ),
)
