"""ps8's gradient cells: the gradient of x through the statistics, and the parameters'.

The gradients are compared with nn.LayerNorm's in float64 (the oracle's `torch_layer_norm`),
or, when the module computes another member of the family (whose cells say so), with that
member's, so each cell reads one thing: `stats_in_graph`, dx (a mean or variance cut from the
graph, by `.detach()`, `.item()`, `.data` or NumPy, leaves the values right and dx wrong: Ba,
Kiros and Hinton's normalization is differentiated through its statistics); and
`parameter_gradients`, dweight and dbias.
"""

from __future__ import annotations

import numpy as np

from . import formulas
from .evidence import fmt, record, where, worst
from .judges import each_case
from .normchecks.formula_match import wrong_choices
from .oracle import ASK
from .ps8_probes import (
    CLASS,
    float_array,
    formula_questions,
    member_options,
    members,
    output,
    trailing_axes,
)
from .spec import check_spec

DETACHED_WORDS = {
    ("mean", "var"): "the mean and the variance",
    ("mean",): "the mean",
    ("var",): "the variance",
}


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    scale = 1.0 + np.abs(want).max(initial=0.0)
    return (
        got.size == want.size and worst(got.reshape(want.shape), want, 1e-6, 1e-9 * scale) is None
    )


def _expected(seen, member=None, **extra) -> dict:
    """The oracle's output and gradients for the case, for `member` (None: nn.LayerNorm's)."""
    case = seen.case
    shape, x, weight, bias, dy = case.args
    options = {**member_options(member), **extra}
    return seen.oracle.torch_layer_norm(
        x, shape, weight, bias, eps=case.meta["eps"], dy=dy, **options
    )


def _gradient_questions(case) -> list:
    """The family on the case's x, and the gradients of any member the module may compute,
    with and without each statistic cut (which is asked depends on the module's output)."""
    shape, x, weight, bias, dy = case.args
    eps = case.meta["eps"]
    return [
        *formula_questions(case),
        *(
            ASK.torch_layer_norm(
                x, shape, weight, bias, eps=eps, dy=dy, **member_options(member), **cut
            )
            for member in (None, *formulas.members(np.ndim(x)))
            for cut in ({}, *({"detach": detach} for detach in DETACHED_WORDS))
        ),
    ]


def _candidates(seen) -> list:
    """The members the output matches, the closest to LayerNorm first ([None]: none): a
    gradient is judged against the forward pass the module computes."""
    matches = members(seen, seen.value["y"])
    axes, eps = trailing_axes(seen.case), seen.case.meta["eps"]
    return sorted(matches, key=lambda v: len(wrong_choices(v, axes, True, eps))) or [None]


def _read_backward(case, result):
    """Reader: the forward probe's findings (`output`), or why backward from its output failed."""
    found, problem = output(case, result)
    if found and found.get("backward_error"):
        return None, (
            f"Gradients: for {where(case)}, backward from your output fails "
            f"({found['backward_error']}): the output must stay in torch's graph (no NumPy "
            f"round trip, no torch.no_grad())."
        )
    return found, problem


def _dx(seen):
    case = seen.case
    dx = float_array(seen.value.get("dx"))
    if dx is None:
        return (
            f"Gradients: for {where(case)}, x received no gradient: your output does not reach "
            f"x through torch's graph."
        )
    candidates = _candidates(seen)
    if any(_close(dx, _expected(seen, member)["dx"]) for member in candidates):
        return None
    for detach in DETACHED_WORDS:
        if _close(dx, _expected(seen, candidates[0], detach=detach)["dx"]):
            return (
                f"Statistics out of the graph: for {where(case)}, the gradient of x is what it "
                f"would be with {DETACHED_WORDS[detach]} held constant. The output depends on "
                f"each record's statistics, so the gradient must flow through them: a "
                f".detach(), .item(), .data or a NumPy round trip cuts that path."
            )
    want = _expected(seen, candidates[0])["dx"]
    r = tuple(int(i) for i in worst(dx.reshape(want.shape), want, 1e-6, 1e-9))
    return (
        f"Gradients: for {where(case)}, the gradient of x is not the one of your own forward "
        f"pass as nn.LayerNorm's backward computes it (entry {record(r)} is off by "
        f"{fmt(abs(dx.reshape(want.shape)[r] - want[r]))}): keep every step of the forward "
        f"in torch's graph, and do not write a backward of your own."
    )


STATS_IN_GRAPH = check_spec(
    "stats_in_graph",
    CLASS,
    each_case(_read_backward, _dx),
    "the gradient of x flows through the mean and the variance",
    misconception="the statistics detached from the graph",
    points=3,
    questions=_gradient_questions,
    salt="values",
)


def _parameters(seen):
    case = seen.case
    expected = [_expected(seen, member) for member in _candidates(seen)]
    want = expected[0]
    for name, key in (("weight", "dweight"), ("bias", "dbias")):
        got = float_array(seen.value.get(key))
        if got is None:
            return (
                f"Parameter gradients: for {where(case)}, {name}.grad is None after backward: "
                f"{name} is not in the graph of the output (.data, .detach() or torch.no_grad() "
                f"around its use cuts it), so an optimizer would never change it."
            )
        if not any(_close(got, one[key]) for one in expected):
            r = tuple(int(i) for i in worst(got.reshape(want[key].shape), want[key], 1e-6, 1e-9))
            return (
                f"Parameter gradients: for {where(case)}, {name}.grad is not the gradient of "
                f"your output with respect to {name} (entry {record(r)} differs): each "
                f"{name}[k] must enter the output of every record once, as in nn.LayerNorm."
            )
    return None


PARAMETER_GRADIENTS = check_spec(
    "parameter_gradients",
    CLASS,
    each_case(_read_backward, _parameters),
    "weight and bias receive their gradients",
    misconception="the parameters' gradients missing or wrong",
    points=2,
    questions=_gradient_questions,
    salt="values",
)
