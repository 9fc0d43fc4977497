"""ps1_by_hand: LayerNorm of one record worked by hand, and parameter counts.

The seed's worked example (Ba, Kiros and Hinton, 2016, arXiv:1607.06450, eq. 3) on each
student's own record r and d_model (`pools`; each case carries them in its meta): r's mean and
population variance, r normalized with eps ignored, then with eps = 1e-5 inside the root, and
the learned entries of three layers. Each question has a table of typical wrong answers,
`Mistake`s, computed from r and the oracle's right answers. No message carries a right answer,
nor the student's own value (which may be the answer to another question).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from .oracle import ASK, ask
from .spec import registry
from .values import close, looks_rounded, number, value_spec, vector

ASSIGNMENT = "ps1_by_hand"
EPS = 1e-5


@dataclass(frozen=True)
class Mistake:
    """A typical wrong answer: its value from the right answers, the message."""

    value: Callable  # value(right: dict) -> the wrong answer, `right` as `_right` makes it
    message: str


def variant_of(case) -> tuple[np.ndarray, int]:
    """(r, d_model): the variant a case grades (its meta, from the battery)."""
    return np.asarray(case.meta["record"], dtype=np.float64), int(case.meta["d_model"])


def right_questions(case) -> list:
    """Every question a cell asks about its case's variant (a message may draw on any)."""
    r, d_model = variant_of(case)
    return [
        ASK.reference("row_stats", r),
        ASK.reference("layer_norm", r, eps=0.0),
        ASK.reference("layer_norm", r, eps=EPS),
        ASK.reference("param_count", "layer_norm", d_model),
        ASK.reference("param_count", "layer_norm", d_model, bias=False),
        ASK.reference("param_count", "rms_norm", d_model),
    ]


# the names of `right_questions`' answers after row_stats' (mu, var), in its order
_ANSWER_NAMES = ("x_hat", "with_eps", "params_gain_bias", "params_gain_only", "params_rms")


def _right(seen) -> dict:
    """The variant (r, d, d_model) and the oracle's right answers."""
    r, d_model = variant_of(seen.case)
    (mean, var), *answers = (ask(seen.oracle, q) for q in right_questions(seen.case))
    named = dict(zip(_ANSWER_NAMES, answers, strict=True))
    return {"r": r, "d": r.size, "d_model": d_model, "mu": float(mean), "var": float(var), **named}


def _centred(a: dict) -> np.ndarray:
    return a["r"] - a["mu"]


def _sample_var(a: dict) -> float:
    return a["var"] * a["d"] / (a["d"] - 1)


ROUNDED = "{name} looks rounded: keep every digit (let Python compute it, or type the fraction)."

MEAN_MISTAKES = (
    Mistake(
        lambda a: a["mu"] * a["d"] / (a["d"] - 1),
        "mean_r divides the sum by d - 1. The mean divides the sum of the d features by d; "
        "d - 1 belongs only to the sample variance, which LayerNorm does not use.",
    ),
    Mistake(
        lambda a: a["mu"] * a["d"],
        "mean_r is the sum of the features: divide it by how many there are, d.",
    ),
    Mistake(
        lambda a: a["var"] + a["mu"] ** 2,
        "mean_r averages the squares of the features: average the features themselves.",
    ),
)

VARIANCE_MISTAKES = (
    Mistake(
        _sample_var,
        "var_r divides the squared deviations by d - 1 (the sample variance, np.var(ddof=1), "
        "torch.var's default). LayerNorm describes the record itself: the population "
        "variance divides by d.",
    ),
    Mistake(
        lambda a: np.sqrt(a["var"]),
        "var_r is a standard deviation (a square root was taken). The variance is the mean "
        "of the squared deviations, before any square root.",
    ),
    Mistake(
        lambda a: np.sqrt(_sample_var(a)),
        "var_r is the sample standard deviation: two steps too far. Average the squared "
        "deviations over d (not d - 1) and take no square root.",
    ),
    Mistake(
        lambda a: a["var"] + a["mu"] ** 2,
        "var_r is the mean of the squares of r itself: subtract the mean from every feature "
        "first, then average the squares of those deviations.",
    ),
    Mistake(
        lambda a: a["var"] * a["d"],
        "var_r is the sum of the squared deviations: average them, divide by d.",
    ),
    Mistake(
        lambda a: float(np.abs(_centred(a)).mean()),
        "var_r averages the absolute deviations: square the deviations instead.",
    ),
    Mistake(
        lambda a: 0.0,
        "var_r is 0: the deviations from the mean always sum to zero. Square each deviation "
        "first, then average the squares.",
    ),
    Mistake(
        lambda a: a["var"] + EPS,
        "var_r has eps added: eps is no part of the record's variance; it enters in Part B.",
    ),
)

NORMALIZED_MISTAKES = (
    Mistake(
        lambda a: _centred(a) / np.sqrt(_sample_var(a)),
        "normalized_r divides by the sample standard deviation (d - 1): LayerNorm divides by "
        "the square root of the population variance.",
    ),
    Mistake(
        lambda a: _centred(a) / a["var"],
        "normalized_r divides by the variance: divide by its square root, the standard deviation.",
    ),
    Mistake(
        lambda a: a["r"] / np.sqrt(a["var"]),
        "normalized_r does not subtract the mean: subtract it from every feature first.",
    ),
    Mistake(
        _centred,
        "normalized_r is centred but not scaled: divide the deviations by the standard deviation.",
    ),
    Mistake(
        lambda a: _centred(a) / np.sqrt(a["var"] + a["mu"] ** 2),
        "normalized_r divides by the root mean square of r itself: the scale is the standard "
        "deviation, from the squares of the deviations.",
    ),
    Mistake(
        lambda a: a["with_eps"],
        "normalized_r already has eps in it: this answer ignores eps (the next one adds it).",
    ),
)

EPS_MISTAKES = (
    Mistake(
        lambda a: a["x_hat"],
        "normalized_r_eps is the record normalized without eps (to 1e-9): add eps = 1e-5 "
        "where the formula at the top of the notebook adds it, and keep every digit (compute "
        "it in Python): its effect shows only far down the digits.",
    ),
    Mistake(
        lambda a: _centred(a) / (np.sqrt(a["var"]) + EPS),
        "eps outside the square root: you added eps to the standard deviation. LayerNorm adds "
        "eps to the variance, under the square root.",
    ),
    Mistake(
        lambda a: a["x_hat"] + EPS,
        "eps added to the output: LayerNorm adds eps to the variance, before the square root "
        "and the division, not to the result.",
    ),
    Mistake(
        lambda a: _centred(a) / np.sqrt(_sample_var(a) + EPS),
        "normalized_r_eps uses the sample variance (d - 1): use the population variance, "
        "then add eps.",
    ),
)


def _rule(name: str, key: str, mistakes, otherwise: str, atol: float | None = None, also=None):
    """The rule of a cell that reads one answer, `name`: right when it is right[key] (one
    number, or with `atol` a vector of d entries); else rounded, a known mistake, also(got,
    right), or the message `otherwise` (formatted with d)."""

    def same(got, want) -> bool:
        if atol is None:
            return close(float(got), float(want))
        return bool(np.allclose(got, want, rtol=0, atol=atol))

    def rule(seen):
        right = _right(seen)
        value = seen.value[name]
        got, problem = number(name, value) if atol is None else vector(name, value, right["d"])
        if problem:
            return problem
        if same(got, right[key]):
            return None
        if looks_rounded(got, right[key]):
            return ROUNDED.format(name=name)
        for mistake in mistakes:
            if same(got, np.asarray(mistake.value(right), dtype=np.float64)):
                return mistake.message
        return (also(got, right) if also else "") or otherwise.format(d=right["d"])

    return rule


_mean = _rule(
    "mean_r",
    "mu",
    MEAN_MISTAKES,
    "mean_r is not the mean of r: add up its d = {d} features and divide by d.",
)
_variance = _rule(
    "var_r",
    "var",
    VARIANCE_MISTAKES,
    "var_r is not the variance of the formula at the top of the notebook: subtract the "
    "mean from every feature, square those deviations and average them as it says.",
)
_normalized = _rule(
    "normalized_r",
    "x_hat",
    NORMALIZED_MISTAKES,
    "normalized_r is not (r - mean) / standard deviation with eps ignored: compute it "
    "with NumPy from r, mean_r and var_r, one entry per feature, in r's order.",
    atol=1e-6,
)


def _other_eps(got: np.ndarray, right: dict) -> str:
    """The message when got is r normalized with another eps (of one significant digit)."""
    centred = _centred(right)
    moved = (centred != 0) & (got != 0)  # a feature at the mean says nothing of eps
    if not moved.any():
        return ""
    implied = float(np.median((centred[moved] / got[moved]) ** 2 - right["var"]))
    if not np.isfinite(implied) or implied <= 0:
        return ""
    used = float(f"{implied:.0e}")
    if used == EPS or not np.allclose(got, centred / np.sqrt(right["var"] + used), atol=1e-9):
        return ""
    shown = f"{used:.0e}".replace("e-0", "e-")
    return f"normalized_r_eps uses eps = {shown}: this question asks for eps = 1e-5."


_eps_effect = _rule(
    "normalized_r_eps",
    "with_eps",
    EPS_MISTAKES,
    "normalized_r_eps is not the record normalized by the formula at the top of the "
    "notebook with gamma = 1, beta = 0 and eps = 1e-5: compute it with NumPy from r, "
    "mean_r and var_r.",
    atol=1e-9,
    also=_other_eps,
)

PARAM_WORDS = {
    "params_gain_bias": "a LayerNorm with a gain and a bias",
    "params_gain_only": "a LayerNorm with a gain and no bias",
    "params_rms": "an RMSNorm",
}


def _count_mistakes(name: str, right: dict) -> list[tuple[float, str]]:
    """(wrong count, message) for the typical wrong counts of `name` (no message names a count:
    another question may ask it)."""
    own, d_model, d = right[name], right["d_model"], right["d"]
    per_feature = own // d_model  # vectors of d_model entries it learns
    found = [
        (
            float(per_feature),
            f"{name} counts one entry per vector for the whole layer: "
            "each learned vector has one entry per feature, d_model of them.",
        ),
        (
            float(per_feature * d),
            f"{name} is counted for the record r of Part A (d = {d}): "
            "this layer normalizes records of d_model features.",
        ),
        (
            float(per_feature * d_model**2),
            f"{name} counts a d_model x d_model matrix: the "
            "learned gain (and bias) are vectors, one entry per feature.",
        ),
        (
            float(own + 2 * d_model),
            f"{name} counts a running mean and variance: batch-norm "
            "keeps those as buffers, not learned, and LayerNorm and RMSNorm keep none.",
        ),
    ]
    if name == "params_gain_bias":
        both = "with a gain and a bias LayerNorm learns both, each with one entry per feature"
        return [*found, (float(d_model), f"{name} counts one vector: {both}.")]
    why = "RMSNorm has none" if name == "params_rms" else "bias=False leaves it out"
    found.append((float(own + d_model), f"{name} counts a bias: {why}, only the gain."))
    found.append((0.0, f"{name} is 0, but the gain is learned: one entry per feature."))
    return found


def _param_counts(seen):
    counts = {}
    for name in PARAM_WORDS:
        got, problem = number(name, seen.value[name])
        if problem:
            return problem
        counts[name] = got
    right = _right(seen)
    for name, words in PARAM_WORDS.items():
        if counts[name] != right[name]:
            known = (m for wrong, m in _count_mistakes(name, right) if counts[name] == wrong)
            return next(
                known,
                f"{name} is not the number of entries that {words} learns: count the learned "
                "vectors (gain, bias) and the entries of each, one per feature of d_model.",
            )
    return None


_cell_spec = partial(value_spec, questions=right_questions)  # every cell may draw on every answer
CHECKS = registry(
    ASSIGNMENT,
    _cell_spec(
        "mean",
        ("mean_r",),
        _mean,
        "the mean of r",
        misconception="the mean of a record wrong",
        points=1,
    ),
    _cell_spec(
        "variance",
        ("var_r",),
        _variance,
        "the variance of r",
        misconception="the variance by hand wrong (the sample variance?)",
        points=2,
    ),
    _cell_spec(
        "normalized",
        ("normalized_r",),
        _normalized,
        "r normalized, eps ignored",
        misconception="the normalized record wrong",
        points=2,
    ),
    _cell_spec(
        "eps_effect",
        ("normalized_r_eps",),
        _eps_effect,
        "r normalized with eps = 1e-5",
        misconception="eps outside the square root, or its effect rounded away",
        points=2,
    ),
    _cell_spec(
        "param_counts",
        ("params_gain_bias", "params_gain_only", "params_rms"),
        _param_counts,
        "the learned entries of three layers",
        misconception="parameter counts of the wrong convention",
        points=3,
    ),
)
