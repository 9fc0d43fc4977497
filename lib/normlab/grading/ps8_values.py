"""ps8's cells on what the module computes: values, axes, no affine, divisor, eps, dtype, reuse,
against `torch.nn.LayerNorm` in float64 (Ba, Kiros and Hinton, 2016, arXiv:1607.06450, eqs.
3-4); the cells that read one choice of the formula judge by `ps8_probes.choice_spec`.
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.tripwire import TRIPWIRE_REMOVED

from .evidence import first_beyond, first_index, fmt, record, where, worst
from .formulas import describe_axes
from .judges import each_case
from .normchecks.cells import REUSE, reuse_message
from .oracle import ASK
from .ps8_probes import (
    CLASS,
    DEFAULT_EPS,
    affine_property,
    choice_spec,
    formula_questions,
    members,
    output,
    probed,
    trailing_axes,
)
from .spec import check_spec
from .verdict import Message


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
    index = worst(y, want, 1e-6, 1e-8 * (1 + np.abs(want).max()))
    r = tuple(int(i) for i in index)
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
        if affine_property(x, y, axes):
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
    """Reader: a structure probe's findings, or a forward probe's output (or the problem)."""
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
    case = seen.case
    returned = np.asarray(seen.result.output["y"]).dtype
    if returned != np.float32:
        return (
            f"float32 in, {returned} out: for {where(case)} (the module as built, its own "
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
    found = result.output if isinstance(result.output, dict) else {}
    kernels = found.get("kernels", ())
    kernels = [k for k in kernels if isinstance(k, str)] if isinstance(kernels, tuple) else []
    hits = calls + [k for k in kernels if k not in calls]
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
