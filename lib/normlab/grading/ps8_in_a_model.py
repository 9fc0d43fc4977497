"""ps8_in_a_model: the student writes LayerNorm as a torch module and trains it in a model.

    class LayerNorm(torch.nn.Module):
        def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True): ...
        def forward(self, x): ...

normalized_shape is an int or a tuple of trailing sizes; the parameters are `weight` and `bias`;
forward is built from torch primitives. Graded against torch.nn.LayerNorm (Ba, Kiros and
Hinton, 2016, arXiv:1607.06450, eqs. 3-4), in float64: what it computes (values, axes, no
affine, divisor, eps, dtype, reuse; the cells that read one choice of the formula judge by
`choice_spec`), its gradients, its parameters and checkpoints, and a short training
run in ps8's spirals network (`normlab_sandbox.spirals`) beside the same run with nn.LayerNorm.
The grading kernel has the real torch (`REAL_TORCH`); each case is a probe of the student's
class there (`normlab_sandbox.module_probes`) that returns arrays. `MANUAL`: graded by hand.

The gradients are compared with nn.LayerNorm's (the oracle's `torch_layer_norm`), or, when the
module computes another member of the family (whose cells say so), with that member's, so each
cell reads one thing: `stats_in_graph`, dx (a mean or variance cut from the graph, by
`.detach()`, `.item()`, `.data` or NumPy, leaves the values right and dx wrong: Ba, Kiros and
Hinton's normalization is differentiated through its statistics); and `parameter_gradients`,
dweight and dbias.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np

from normlab_sandbox.cases import Case
from normlab_sandbox.tripwire import TRIPWIRE_REMOVED

from . import formulas
from .evidence import (
    affine_rows,
    failure_of_call,
    first_beyond,
    first_index,
    fmt,
    near,
    record,
    where,
    worst,
)
from .formulas import describe_axes
from .judges import each_case
from .normchecks.cells import REUSE, reuse_message
from .normchecks.formula_match import formula_judge, wrong_choices
from .oracle import ASK, ask
from .spec import check_spec, registry
from .verdict import CRASHED, NOT_WRITTEN, PASSED, Message, Verdict

ASSIGNMENT = "ps8_in_a_model"
MANUAL = {"what_a_norm_buys": 4}
REAL_TORCH = True  # the grading kernel imports the real torch (see normlab_sandbox.standins)
PARAMETERS = ("weight", "bias")
CLASS = "LayerNorm"
DEFAULT_EPS = 1e-5


def built(normalized_shape, eps=None, affine=None) -> str:
    """The module a case builds, as code: "LayerNorm((3, 4), eps=0.1)"."""
    extra = f", eps={eps:g}" if eps is not None else ""
    extra += ", elementwise_affine=False" if affine is False else ""
    return f"{CLASS}({normalized_shape}{extra})"  # as the student writes it: 8, or (3, 4)


def forward_case(
    normalized_shape, x, *, weight=None, bias=None, dy=None, eps=None, affine=None, tag: str, **meta
) -> Case:
    """A `forward` probe: LayerNorm(normalized_shape[, eps][, elementwise_affine]) on x, with
    weight and bias put in (None: the module's own), backward with dy (None: no backward)."""
    x = np.asarray(x)
    kwargs = {k: v for k, v in (("eps", eps), ("elementwise_affine", affine)) if v is not None}
    label = f"{built(normalized_shape, eps, affine)} on x of shape {x.shape}"
    label += f", {x.dtype}" if x.dtype != np.float64 else ""
    meta = {"eps": DEFAULT_EPS if eps is None else float(eps), "eps_passed": eps, **meta}
    args = (normalized_shape, x, weight, bias, dy)
    return Case(CLASS, "probe", args, kwargs, tag=tag, label=label, meta=meta, probe="forward")


def probe_case(probe: str, *args, tag: str, label: str, **kwargs) -> Case:
    """Any other probe of the class: parameters, state_dict, training."""
    return Case(CLASS, "probe", args, kwargs, tag=tag, label=label, probe=probe)


def trailing_axes(case: Case) -> tuple[int, ...]:
    """The axes of x that the case's normalized_shape names (its trailing ones)."""
    shape, x = case.args[0], case.args[1]
    count = 1 if isinstance(shape, int) else len(shape)
    return tuple(range(x.ndim - count, x.ndim))


def float_array(value) -> np.ndarray | None:
    """value as a float64 array, or None when it is not an array of numbers."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiu":
        return None
    return value.astype(np.float64)


def probed(case: Case, result):
    """Reader: the probe's findings (a dict), or the problem (a forward returning None: "not
    written")."""
    problem = failure_of_call(CLASS, case, result)
    if problem:
        return None, problem
    found = result.output
    if not isinstance(found, dict):
        return None, Verdict(CRASHED, f"the grader could not read the probe of {where(case)}.")
    if isinstance(found.get("unset"), str):  # the probe found no tensor to put a value in
        why = found["unset"]
        text = (
            f"{why}, so the grader cannot put the case's values in ({where(case)}): name the "
            f"parameters weight and bias, tensors of normalized_shape, as nn.LayerNorm does."
        )
        return None, Verdict(CRASHED, text, cause=why)
    if "y" in found and found["y"] is None:
        returned = str(found.get("returned", "?"))
        if returned == "NoneType":
            text = (
                f"{CLASS}.forward is not written yet: it returns None ({where(case)}). Write "
                f"the bodies of __init__ and forward in its answer cell, forward ending with "
                f"return."
            )
            return None, Verdict(NOT_WRITTEN, text)
        text = f"{CLASS}.forward returned {returned}, not a tensor ({where(case)})."
        return None, Verdict(CRASHED, text, cause=f"{CLASS}.forward returns {returned}")
    return found, None


def output(case: Case, result):
    """Reader: the forward probe's findings, "y" a float64 array of x's shape."""
    found, problem = probed(case, result)
    if problem:
        return None, problem
    y, x = float_array(found.get("y")), case.args[1]
    if y is None:
        return None, Verdict(CRASHED, f"{CLASS}.forward returned no numbers ({where(case)}).")
    if y.shape != x.shape:
        return None, (
            f"Shape: {where(case)} gives an output of shape {y.shape}; a LayerNorm's output "
            f"has the input's shape {x.shape}."
        )
    return {**found, "y": y}, None


def formula_questions(case: Case) -> list:
    """What `members` asks about a forward probe: the family on its x."""
    if case.probe != "forward":
        return []
    return [ASK.formula_outputs(np.asarray(case.args[1], dtype=np.float64), case.meta["eps"])]


def members(seen, y: np.ndarray) -> list[formulas.Formula]:
    """The formulas whose output on the case's x, with its weight and bias, is y."""
    case = seen.case
    x, weight, bias = np.asarray(case.args[1], dtype=np.float64), case.args[2], case.args[3]
    w = 1.0 if weight is None else np.asarray(weight, dtype=np.float64)
    b = 0.0 if bias is None else np.asarray(bias, dtype=np.float64)
    outputs = seen.oracle.formula_outputs(x, case.meta["eps"])
    return formulas.matching(y, outputs, change=lambda z: w * z + b)


# the student's module as `formula_match` judges it (a target): LayerNorm over the trailing axes
# normalized_shape names, its output read with the case's weight and bias; no fallback verdict
MODULE = SimpleNamespace(
    who="your module",
    center=True,
    x_of=lambda case: np.asarray(case.args[1], dtype=np.float64),
    axes_of=trailing_axes,
    matches=lambda seen: members(seen, seen.value["y"]),
    fallback=lambda seen: None,
)


def cells_for(case: Case) -> dict:
    """{choice: the cell that reads it} on this case (`qualified`), as registry links the
    choice cells, but a tuple normalized_shape's axes are trailing_axes'."""
    tuple_axes = {} if isinstance(case.args[0], int) else {"axes": TRAILING_AXES.grade_id}
    return {**VALUES.choices, **tuple_axes}


def choice_spec(grade_id: str, choices: tuple[str, ...], explain, summary: str, **fields):
    """The cell of the class that reads `choices`, judged by `formula_match.formula_judge` with
    explain(seen, y, closest); `fields`: as `check_spec`'s (questions: `formula_questions`)."""
    judge = formula_judge(
        MODULE,
        output,
        set(choices),
        lambda seen, closest: explain(seen, seen.value["y"], closest),
        lambda case: {c: cell for c, cell in cells_for(case).items() if c not in choices},
    )
    fields.setdefault("questions", formula_questions)
    return check_spec(grade_id, CLASS, judge, summary, reads=choices, **fields)


def _values_questions(case) -> list:
    """The family on the case's x, and nn.LayerNorm's output with its weight and bias."""
    x = np.asarray(case.args[1])
    return [*formula_questions(case), ASK.torch_layer_norm(x, case.args[0], *case.args[2:4])]


def _explain_values(seen, y, closest):
    case, x = seen.case, np.asarray(seen.case.args[1])
    axes = trailing_axes(case)
    if closest is not None and closest.axes != axes:
        return (
            f"Wrong axes: for {where(case)}, your module takes its statistics over "
            f"{describe_axes(closest.axes, x.ndim)}. normalized_shape names the trailing axes "
            f"a record spans: here {describe_axes(axes, x.ndim)}, whatever the leading axes."
        )
    if closest is not None:  # right axes, not centred
        return (
            f"No centring: for {where(case)}, your module does not subtract each record's "
            f"mean before dividing (that is RMSNorm). LayerNorm centres each record first."
        )
    want = seen.oracle.torch_layer_norm(x, case.args[0], case.args[2], case.args[3])["y"]
    r = worst(y, want, 1e-6, 1e-8 * (1 + np.abs(want).max()))
    return (
        f"Values: for {where(case)}, your output is not nn.LayerNorm's with the same weight "
        f"and bias (entry {record(r)} is off by {fmt(abs(y[r] - want[r]))}), and it is not "
        f"weight * x_hat + bias of any normalized x_hat: check how the weight and the bias "
        f"enter (each entry k gets weight[k] and bias[k], after normalizing)."
    )


VALUES = choice_spec(
    "values",
    ("axes", "center"),
    _explain_values,
    "LayerNorm(d) computes nn.LayerNorm(d)'s values (float64, weight and bias)",
    misconception="the values are not nn.LayerNorm's (axes, centring, weight and bias)",
    points=3,
    questions=_values_questions,
)


def _explain_trailing(seen, y, closest):
    case, x = seen.case, np.asarray(seen.case.args[1], dtype=np.float64)
    axes = trailing_axes(case)
    if closest is None:
        size = int(np.prod([x.shape[a] for a in axes]))
        if affine_rows(x.reshape(-1, size), y.reshape(-1, size)):
            return None  # not a member, but each record is rescaled by its own numbers
        return (
            f"Trailing axes: for {where(case)}, the output is not each record rescaled by "
            f"its own statistics over {describe_axes(axes, x.ndim)}."
        )
    spans = "the last axis only" if closest.axes == axes[-1:] else None
    spans = spans or describe_axes(closest.axes, x.ndim)
    count = len(case.args[0])
    return (
        f"Trailing axes: for {where(case)}, your module takes its statistics over {spans}. "
        f"normalized_shape={case.args[0]} names the last {count} "
        f"{'axis' if count == 1 else 'axes'} of x, and each record is normalized over all "
        f"of its {int(np.prod(case.args[0]))} entries at once, as nn.LayerNorm does."
    )


TRAILING_AXES = choice_spec(
    "trailing_axes",
    ("axes",),
    _explain_trailing,
    "a tuple normalized_shape: statistics over those trailing axes together",
    misconception="a tuple normalized_shape not normalized over all its axes",
    points=2,
)


def _read_no_affine(case, result):
    return probed(case, result) if case.tag == "structure" else output(case, result)


def _no_affine(seen):
    case, found = seen.case, seen.value
    if case.tag == "structure":
        held = [name for name, *_ in found.get("parameters", ())]
        held += [key for key in found.get("state_dict", {}) if key in ("weight", "bias")]
        if held:
            return (
                f"elementwise_affine=False: {where(case)} holds "
                f"{', '.join(sorted(set(held)))}; nn.LayerNorm(..., "
                f"elementwise_affine=False) learns nothing: no parameters, no weight or "
                f"bias in its state_dict."
            )
        return None
    if not members(seen, found["y"]):
        return (
            f"elementwise_affine=False: for {where(case)}, the output is not the "
            f"normalized x: without a gain and a bias, nothing scales or shifts it."
        )
    return None


NO_AFFINE = check_spec(
    "no_affine",
    CLASS,
    each_case(_read_no_affine, _no_affine),
    "elementwise_affine=False: no parameters, the normalized x",
    misconception="elementwise_affine=False ignored",
    points=2,
    questions=formula_questions,
)


def _explain_divisor(seen, y, closest):
    case, x = seen.case, np.asarray(seen.case.args[1], dtype=np.float64)
    axes = trailing_axes(case)
    n = int(np.prod([x.shape[a] for a in axes]))
    if closest is None:
        spread = y.var(axis=axes)
        r = first_beyond(spread - 1, 1e-4)
        if r is None:
            return None
        return (
            f"Scale: for {where(case)} (weight 1, bias 0), output record {record(r)} has "
            f"variance {fmt(spread[r])}, not 1: divide by the square root of the population "
            f"variance."
        )
    if closest.divisor == "n-1":
        return (
            f"Sample variance: for {where(case)}, your module divides the sum of squares by "
            f"n - 1 = {n - 1}: torch.var's default (unbiased, correction=1) does. LayerNorm "
            f"uses the population variance of each record, divided by n = {n}, so every "
            f"output is sqrt({n - 1}/{n}) = {np.sqrt((n - 1) / n):.4f} times too small."
        )
    return (
        f"Sum of squares: for {where(case)}, your module divides by the root of the sum of "
        f"squares (an L2 norm), not of their mean: the variance divides by n = {n}."
    )


POPULATION_VARIANCE = choice_spec(
    "population_variance",
    ("divisor",),
    _explain_divisor,
    "population variance: divide by n, not n - 1 (torch.var's default)",
    misconception="the sample variance (n - 1), or a sum of squares",
    points=2,
)


def _explain_eps(seen, y, closest):
    case, eps = seen.case, seen.case.meta["eps"]
    if closest is None:
        if not np.all(np.isfinite(y)):
            r = first_index(~np.isfinite(y))
            return (
                f"eps: for {where(case)}, your output has {y[r]} at {record(r)}: a record of "
                f"zero variance must give bias, and eps keeps the division finite."
            )
        return None
    if closest.eps_mode == "outside":
        return (
            f"eps outside the square root: for {where(case)}, your module computes "
            f"(x - mu) / (sigma + eps). The paper and nn.LayerNorm add eps to the variance, "
            f"inside the root; the two differ on records of small variance."
        )
    if closest.eps_mode == "none":
        return (
            f"No eps: for {where(case)}, your module divides by sqrt(sigma^2) alone, so a "
            f"record of zero variance gives 0/0 = NaN and one of tiny variance is blown up."
        )
    if case.meta["eps_passed"] is None:
        return (
            f"Default eps: for {where(case)} (eps not passed), your module uses eps = "
            f"{closest.fixed_eps:g}; the default is eps={DEFAULT_EPS:g}, as nn.LayerNorm's."
        )
    return (
        f"eps ignored: for {where(case)}, your module used eps = {closest.fixed_eps:g}, not "
        f"the eps = {eps:g} it was built with. Keep the argument and use it."
    )


EPS_PLACEMENT = choice_spec(
    "eps_placement",
    ("eps",),
    _explain_eps,
    "eps inside the square root, the argument kept and used",
    misconception="eps outside the square root, missing or ignored",
    points=2,
)


def _float32(seen):
    returned = np.asarray(seen.result.output["y"]).dtype
    if returned != np.float32:
        return (
            f"float32 in, {returned} out: for {where(seen.case)} (the module as built, its own "
            f"weight and bias), the output is {returned}. A float32 input gives a float32 "
            f"output, as nn.LayerNorm's does: make the parameters as torch makes them by "
            f"default, and compute in the input's dtype."
        )
    return None  # the numbers are the other cells' (here the module's own start is used)


FLOAT32 = check_spec(
    "float32",
    CLASS,
    each_case(output, _float32),
    "float32 in, float32 out",
    misconception="a float32 input gives another dtype",
    points=1,
)


# what the grader's tripwire and the probe's look below Python report that ps8 counts as
# reuse: normlab, and torch's normalizations (not the probe's own backward call)
_NOT_REUSE = ("torch.Tensor.backward", "torch.autograd.")


def _read_reuse(case, result):
    """Reader: the library normalizations the forward probe reached by any route, first (even
    when it then fails), then the output."""
    calls = [c for c in result.reference_calls if not c.startswith(_NOT_REUSE)]
    kernels = result.output.get("kernels") if isinstance(result.output, dict) else ()
    kernels = kernels if isinstance(kernels, tuple) else ()
    hits = calls + [k for k in kernels if isinstance(k, str) and k not in calls]
    if not hits:
        return output(case, result)
    if TRIPWIRE_REMOVED in hits:  # the message every reuse cell gives
        return None, reuse_message("your module", hits, "a library normalization")
    return None, Message(
        f"{REUSE} for {where(case)}, your module's forward reached {hits[0]}, a "
        f"library normalization (torch's, or normlab's): build the forward from torch's "
        f"elementwise operations and reductions.",
        cause=hits[0],
    )


REFERENCE_REUSE = check_spec(
    "reference_reuse",
    CLASS,
    each_case(_read_reuse),
    "written from torch primitives: no library normalization reached",
    misconception="a library normalization called",
    points=2,
    voids=True,
)


DETACHED_WORDS = {
    ("mean", "var"): "the mean and the variance",
    ("mean",): "the mean",
    ("var",): "the variance",
}


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    return got.size == want.size and near(got.reshape(want.shape), want, 1e-6, 1e-9)


def _question(case, member=None, **cut):
    """The question of the case's output and gradients for `member` (None: nn.LayerNorm's; a
    member's fields are the oracle's keywords), with `cut` (detach=...)."""
    shape, x, weight, bias, dy = case.args
    options = {} if member is None else dataclasses.asdict(member)
    return ASK.torch_layer_norm(
        x, shape, weight, bias, eps=case.meta["eps"], dy=dy, **options, **cut
    )


def _expected(seen, member=None, **cut) -> dict:
    return ask(seen.oracle, _question(seen.case, member, **cut))


def _gradient_questions(case) -> list:
    """The family on the case's x, and the gradients of any member the module may compute,
    with and without each statistic cut (which is asked depends on the module's output)."""
    cuts = ({}, *({"detach": detach} for detach in DETACHED_WORDS))
    family = (None, *formulas.members(np.ndim(case.args[1])))
    asked = [_question(case, member, **cut) for member in family for cut in cuts]
    return [*formula_questions(case), *asked]


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
