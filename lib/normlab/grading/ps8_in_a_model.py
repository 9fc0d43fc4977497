"""ps8_in_a_model: the student writes LayerNorm as a torch module and trains it in a model.

    class LayerNorm(torch.nn.Module):
        def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True): ...
        def forward(self, x): ...

normalized_shape is an int or a tuple of trailing sizes; the parameters are `weight` and `bias`;
forward is built from torch primitives. Graded against torch.nn.LayerNorm (Ba, Kiros and
Hinton, 2016, arXiv:1607.06450): what it computes (`ps8_values`), its gradients
(`ps8_gradients`), its parameters and checkpoints, and a short training run in ps8's spirals
network (`normlab_sandbox.spirals`) beside the same run with nn.LayerNorm (here). The grading
kernel has the real torch (`REAL_TORCH`); each case is a probe of the student's class there
(`normlab_sandbox.module_probes`) that returns arrays. `MANUAL`: graded by hand.
"""

from __future__ import annotations

import numpy as np

from .evidence import fmt, where
from .judges import each_case
from .oracle import ASK
from .ps8_gradients import PARAMETER_GRADIENTS, STATS_IN_GRAPH
from .ps8_probes import CELLS, CLASS, built, float_array, probed
from .ps8_values import (
    EPS_PLACEMENT,
    FLOAT32,
    NO_AFFINE,
    POPULATION_VARIANCE,
    REFERENCE_REUSE,
    TRAILING_AXES,
    VALUES,
)
from .spec import check_spec, registry
from .verdict import PASSED, Verdict

ASSIGNMENT = "ps8_in_a_model"
MANUAL = {"what_a_norm_buys": 4}
REAL_TORCH = True  # the grading kernel imports the real torch (see normlab_sandbox.standins)
PARAMETERS = ("weight", "bias")


def _registered(seen):
    case, found = seen.case, seen.value
    grads = {name: requires for name, _, requires in found.get("parameters", ())}
    for name in PARAMETERS:
        kind = found.get(name)
        if kind == "parameter" and grads.get(name) is False:
            return (
                f"Registered: in {where(case)}, {name} is a parameter with requires_grad=False: "
                f"it is saved but never receives a gradient, so it never trains."
            )
        if kind == "parameter":
            continue
        if kind == "tensor":
            why = (
                f"{name} is a plain tensor, registered nowhere: module.parameters() does not "
                f"list it, so an optimizer never updates it, and state_dict() does not save it"
            )
        elif kind == "buffer":
            why = f"{name} is a buffer: state_dict() saves it, but an optimizer never updates it"
        else:
            why = f"{name} is {kind}: the module needs a parameter named {name}"
        return f"Registered: in {where(case)}, {why}."
    return None


REGISTERED = check_spec(
    "registered",
    CLASS,
    each_case(probed, _registered),
    "weight and bias are registered parameters (they train)",
    misconception="weight and bias not registered parameters",
    points=2,
)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Two outputs of one float64 computation (a checkpoint's round trip changes no bit of a
    parameter, so any gap is the module's own doing)."""
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= 1e-12 * (1 + np.abs(b))))


def _state_dict(seen):
    """Checkpoints both ways, for modules that register weight and bias (a plain tensor is
    the registered cell's misconception: one bug, one cell)."""
    case, found = seen.case, seen.value
    if "tensor" in (found.get("weight"), found.get("bias")):
        return None
    theirs = f"nn.LayerNorm({case.args[0]})"
    if found.get("into_error"):
        return (
            f"Checkpoints: {theirs}'s state_dict does not load into {built(case.args[0])}: "
            f"{found['into_error']}. The two modules' state_dicts must hold the same entries, "
            f"of the same shapes."
        )
    loaded, direct = float_array(found.get("loaded")), float_array(found.get("direct"))
    if loaded is None or direct is None or not _same(loaded, direct):
        return (
            f"Checkpoints: after loading {theirs}'s state_dict, {built(case.args[0])} does not "
            f"compute what it computes with the same weight and bias set directly: the forward "
            f"must use the entries load_state_dict fills."
        )
    if found.get("out_error"):
        return (
            f"Checkpoints: the state_dict of {built(case.args[0])} does not load into "
            f"{theirs}: {found['out_error']}. Save what nn.LayerNorm saves, nothing more."
        )
    state = found.get("state", {})
    for name, want in zip(PARAMETERS, case.args[2:4], strict=True):
        got = float_array(state.get(name)) if isinstance(state, dict) else None
        if got is None or got.shape != np.shape(want) or not np.array_equal(got, want):
            return (
                f"Checkpoints: for {where(case)}, the state_dict entry {name!r} is not the "
                f"{name} the module computes with."
            )
    return None


STATE_DICT = check_spec(
    "state_dict",
    CLASS,
    each_case(probed, _state_dict),
    "state_dict interchanges with nn.LayerNorm's, both ways",
    misconception="a state_dict nn.LayerNorm cannot read, or that cannot read it",
    points=2,
)


# the formulas whose runs a module may match in the training cell: each is another cell's
# misconception, so it costs that cell, not this one as well; this one then trains as
# nn.LayerNorm does apart from it, and says so. (formula, its cell, in words)
OTHER_CELLS = (
    ({"axes": (0,)}, VALUES, "the axes"),
    ({"axes": (0, 1)}, VALUES, "the axes"),
    ({"center": False}, VALUES, "the centring"),
    ({"divisor": "n-1"}, POPULATION_VARIANCE, "the variance"),
    ({"eps_mode": "outside"}, EPS_PLACEMENT, "eps"),
    ({"eps_mode": "none"}, EPS_PLACEMENT, "eps"),
    ({"detach": ("mean", "var")}, STATS_IN_GRAPH, "the statistics' gradients"),
    ({"detach": ("mean",)}, STATS_IN_GRAPH, "the statistics' gradients"),
    ({"detach": ("var",)}, STATS_IN_GRAPH, "the statistics' gradients"),
    ({"frozen": True}, PARAMETER_GRADIENTS, "the parameters' training"),
)
TRAINING_RTOL = 1e-8  # of the largest loss; the course's solution is within about 1e-13


def _training_questions(case) -> list:
    """The runs with nn.LayerNorm and each member of OTHER_CELLS; a new nn.LayerNorm's state."""
    members = ({}, *(member for member, _, _ in OTHER_CELLS))
    runs = [ASK.training_losses(case.kwargs, **member) for member in members]
    return [*runs, ASK.torch_layer_norm_state(case.kwargs["width"])]


def _same_run(losses: np.ndarray, reference: np.ndarray) -> bool:
    limit = TRAINING_RTOL * np.abs(reference).max()
    return losses.shape == reference.shape and bool(np.all(np.abs(losses - reference) <= limit))


def _start(seen) -> str:
    """What differs in a fresh module of the student's from a fresh nn.LayerNorm, or ''."""
    fresh = seen.value.get("fresh", {})
    width = seen.case.kwargs["width"]
    want = seen.oracle.torch_layer_norm_state(width)
    for name in PARAMETERS:
        got = float_array(fresh.get(name)) if isinstance(fresh, dict) else None
        if got is None or got.shape != want[name].shape or not np.array_equal(got, want[name]):
            shown = "None" if got is None else fmt(got)
            return (
                f" A new LayerNorm({width}) of yours starts with {name}={shown}, which is not "
                f"where a new nn.LayerNorm({width}) starts: the network then starts from "
                f"another function."
            )
    return ""


def _training(seen):
    case = seen.case
    losses = float_array(seen.value.get("losses"))
    reference = seen.oracle.training_losses(case.kwargs)
    if losses is None or losses.shape != reference.shape:
        return f"In a model: {where(case)} did not give one loss per step."
    if _same_run(losses, reference):
        return None
    for member, cell, words in OTHER_CELLS:
        if _same_run(losses, seen.oracle.training_losses(case.kwargs, **member)):
            # another formula: that cell's misconception, named
            held = seen.value.get("held", {})
            if member.get("frozen") and any(held.get(n) != "parameter" for n in PARAMETERS):
                cell = REGISTERED  # weight and bias are not parameters: nothing trains them
            return Verdict(PASSED, note=f"apart from {words}: see {cell.grade_id}")
    gap = np.abs(losses - reference) > TRAINING_RTOL * np.abs(reference).max()
    step = int(np.argmax(gap | ~np.isfinite(losses)))
    later = (  # what a run that starts right and drifts later points at
        " It starts as nn.LayerNorm's run does, so look at what changes from one call to the "
        "next: a module that keeps something between calls (statistics, a cache) computes "
        "another function once it has seen a batch."
    )
    return (
        f"In a model: {where(case)} trains differently from the same run with nn.LayerNorm "
        f"from step {step} on (loss {fmt(losses[step])} there, {fmt(reference[step])} with "
        f"nn.LayerNorm), and not as a LayerNorm with one of the mistakes the other cells "
        f"name would." + (_start(seen) or (later if step else ""))
    )


TRAINING = check_spec(
    "training",
    CLASS,
    each_case(probed, _training),
    "in a network, it trains as nn.LayerNorm does",
    misconception="trains differently from nn.LayerNorm in a model",
    points=3,
    questions=_training_questions,
    apart_from=(*dict.fromkeys(c.grade_id for _, c, _ in OTHER_CELLS), REGISTERED.grade_id),
)


CHECKS = registry(
    ASSIGNMENT,
    VALUES,
    TRAILING_AXES,
    NO_AFFINE,
    POPULATION_VARIANCE,
    EPS_PLACEMENT,
    FLOAT32,
    REFERENCE_REUSE,
    STATS_IN_GRAPH,
    PARAMETER_GRADIENTS,
    REGISTERED,
    STATE_DICT,
    TRAINING,
)
CELLS.update(VALUES.choices, tuple_axes=TRAILING_AXES.grade_id)
