"""ps8's cases and readers: the student's `LayerNorm` class put through `module_probes`.

A ps8 case names a probe (`normlab_sandbox.module_probes`) that builds modules of the student's
class and returns plain data; the readers here turn it into what a rule judges, or into the
problem. The cells that read a choice of the formula judge as ps2's do
(`normchecks.formula_match`), the student's output read with the case's weight and bias.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from normlab_sandbox.cases import Case

from . import formulas
from .evidence import failure_of_call, where
from .normchecks.formula_match import formula_judge
from .oracle import ASK
from .spec import check_spec
from .verdict import CRASHED, NOT_WRITTEN, Verdict

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


# {choice: the cell that reads it}, as registry links ps8's cells, and under "tuple_axes" the
# cell that reads the axes of a tuple normalized_shape (ps8_in_a_model fills it)
CELLS: dict = {}


def cells_for(case: Case) -> dict:
    """{choice: the cell that reads it} on this case (`qualified`): the axes of an int
    normalized_shape are values', a tuple's trailing_axes'."""
    cells = dict(CELLS)
    tuple_axes = cells.pop("tuple_axes")
    return cells if isinstance(case.args[0], int) else {**cells, "axes": tuple_axes}


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
