"""The judge of every cell that reads choices of the normalization formula, and those cells.

A match of the student's output (`formulas`) that is right on the choices the cell reads passes
(`qualified`: apart from others, or not judged where they hide it); else `explain(seen,
closest)` says what is wrong, shown the match with the fewest wrong choices, or None when none
matches (it then checks the property itself). It serves ps2-ps4's functions (`NormKind`) and
ps8's module (`ps8_in_a_model.MODULE`); a *target* says what is right and how the output is read:

    target.who             whose statistics a message names ("layer_norm", "your module")
    target.center          whether the right formula subtracts the mean
    target.x_of(case)      the input the statistics are over, float64
    target.axes_of(case)   the axes the right formula normalizes over
    target.matches(seen)   the formulas the output matches, in `formulas.members`' order
    target.fallback(seen)  a verdict of its own when the output matches no formula, or None
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from normlab_sandbox.cases import Case

from .. import formulas, qualified
from ..evidence import affine_rows, first_beyond, first_index, fmt, record, warned, where, worst
from ..oracle import ASK
from ..spec import CheckSpec
from .kind import NormKind, norm_cell

CHOICES = formulas.CHOICES


def wrong_choices(v: formulas.Formula, axes: tuple[int, ...], center: bool, eps: float) -> set:
    """The choices on which formula v differs from the right one (over `axes`, centring or not,
    the population statistic, eps inside the root)."""
    right_eps = v.eps_mode == "inside" or (v.eps_mode == "fixed" and v.fixed_eps == eps)
    wrong = (v.axes != axes, v.center != center, v.divisor != "n", not right_eps)
    return {choice for choice, bad in zip(CHOICES, wrong, strict=True) if bad}


def formula_judge(target, read, choices: set, explain, cells, words=qualified.WORDS):
    """The judge of a cell that reads `choices` of the formula (see the module docstring);
    `read` turns a result into the value rules see; `cells`: {choice: the cell that reads it}
    (or a function of the case giving it)."""

    def rule(seen):
        axes, eps = target.axes_of(seen.case), seen.case.meta["eps"]
        matches = target.matches(seen)
        wrong = {v: wrong_choices(v, axes, target.center, eps) for v in matches}
        right = [v for v in matches if not (choices & wrong[v])]
        if right:  # it passes, apart from the others its closest match gets wrong (or they hide it)
            best = min(right, key=lambda v: len(wrong[v]))
            others = tuple(c for c in CHOICES if c in wrong[best])
            if not others:
                return None
            why = _hides(target, seen, best, axes, choices)
            return qualified.Hidden(others[0], why) if why else qualified.Apart(others)
        if not matches:
            return target.fallback(seen) or explain(seen, None)
        return explain(seen, min(matches, key=lambda v: len(wrong[v])))

    return qualified.qualified_judge(read, rule, cells, words)


def _hides(target, seen, formula, axes, choices: set) -> str | None:
    """Why a formula's wrong axes hide `choices` on this case, or None: statistics over a set
    of one value (an axis of length one) give 0 (or a sign) whatever the choice."""
    x = target.x_of(seen.case)
    if formula.axes == axes or int(np.prod([x.shape[a] for a in formula.axes])) > 1:
        return None
    shown = " or ".join(qualified.READS[c] for c in sorted(choices))
    return (
        f"for {where(seen.case)}, {target.who} takes its statistics over "
        f"{formulas.describe_axes(formula.axes, x.ndim)}, one value each on this input, so its "
        f"output cannot show {shown}."
    )


def choice_cell(builder, kind: NormKind, grade_id: str, choice: str, explain, summary, **fields):
    """The cell of `kind`'s function that reads `choice`, made by `builder` (its battery)."""
    cells: dict = {}  # {choice: the cell that reads it}, linked when registered
    words = {**qualified.WORDS, "divisor": f"the {kind.statistic_name}"}
    judge = formula_judge(kind, kind.read, {choice}, explain, cells, words)
    other_eps = fields.pop("other_eps", ())

    def questions(case) -> list:
        """The formulas on the case's input (also at each of `other_eps`), and for a per-record
        norm the statistics `NormKind.fallback` reads."""
        x = kind.x_of(case)
        asked = [ASK.formula_outputs(x, eps) for eps in (case.meta["eps"], *other_eps)]
        return asked if kind.leading_axes else [*asked, ASK.statistics(x)]

    return norm_cell(
        builder,
        kind,
        grade_id,
        judge,
        summary,
        questions=questions,
        reads=(choice,),
        choices=cells,
        **fields,
    )


def output_of(seen, formula: formulas.Formula, **change) -> np.ndarray:
    """The output of `formula` (with `change`d choices, e.g. center=True) on the case's input."""
    x = np.asarray(seen.case.args[0], dtype=np.float64)
    return seen.oracle.formula_outputs(x, seen.case.meta["eps"])[replace(formula, **change)]


def evidence_of_difference(y, z) -> str:
    """The record where the output y differs most from z (the same formula, this choice right)."""
    index = worst(y, z, formulas.MATCH_RTOL, formulas.MATCH_ATOL) or (0,) * np.ndim(y)
    r = tuple(index[:-1])
    if not r:
        return f" You returned {fmt(y)}; expected {fmt(z)}."
    return f" Record {record(r)}: you returned {fmt(y[r])}; expected {fmt(z[r])}."


def axis_spec(kind: NormKind, grade_id: str = "axis", *, points: float) -> CheckSpec:
    """Statistics over the right axes, for any number of leading axes."""
    where_ = "every leading axis" if kind.leading_axes else "the last axis"

    def explain(seen, closest):
        x, y = kind.x_of(seen.case), seen.value
        if closest is None:  # is each record (batch-norm: each feature) an affine map of itself?
            xs, ys = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
            if affine_rows(xs.T, ys.T) if kind.leading_axes else affine_rows(xs, ys):
                return None
            return (
                f"Wrong axis: for {where(seen.case)}, the output is not each {kind.unit} "
                f"rescaled by its own statistics: {kind.title} takes its mean and variance "
                f"over {where_}."
            )
        right = kind.correct_axes(x.ndim)
        evidence = evidence_of_difference(y, output_of(seen, closest, axes=right))
        return (
            f"Wrong axis: for {where(seen.case)}, {kind.function} takes its statistics over "
            f"{formulas.describe_axes(closest.axes, x.ndim)}. {kind.title} takes them over "
            f"{formulas.describe_axes(right, x.ndim)}, for any number of leading axes "
            f"(use axis=-1{' and keepdims=True' if not kind.leading_axes else ''})." + evidence
        )

    return choice_cell(
        axis_spec,
        kind,
        grade_id,
        "axes",
        explain,
        f"{kind.title}: statistics over {where_}",
        misconception=f"{kind.title}: statistics over the wrong axes",
        points=points,
    )


def centering_spec(kind: NormKind, grade_id: str = "centering", *, points: float) -> CheckSpec:
    """Subtract the mean (LayerNorm, batch-norm) or not (RMSNorm)."""

    def explain(seen, closest):
        case, y = seen.case, seen.value
        if closest is None:
            return _centring_property(kind, case, kind.x_of(seen.case), y)
        evidence = evidence_of_difference(y, output_of(seen, closest, center=kind.center))
        if kind.center:
            return (
                f"No centring: for {where(case)}, {kind.function} does not subtract the mean "
                f"before dividing. That is RMSNorm; {kind.title} subtracts each record's "
                f"own mean first." + evidence
            )
        return (
            f"Centring: for {where(case)}, {kind.function} subtracts the mean. That is "
            f"LayerNorm; RMSNorm divides each record, as it is, by its root mean square." + evidence
        )

    return choice_cell(
        centering_spec,
        kind,
        grade_id,
        "center",
        explain,
        "subtracts the mean" if kind.center else "does not subtract the mean",
        misconception="the mean not subtracted" if kind.center else "the mean subtracted",
        points=points,
    )


def _centring_property(kind: NormKind, case, x, y) -> str | None:
    """No member of the family matches: is the output centred (or, for RMSNorm, unshifted)?"""
    if kind.center:
        axes = kind.correct_axes(x.ndim)
        mean = y.mean(axis=axes)
        r = first_beyond(mean, 1e-6 * (1 + np.abs(y).max()))
        if r is not None:
            return (
                f"No centring: for {where(case)}, output record {record(r)} has mean "
                f"{fmt(mean[r])}, not 0: subtract each record's mean."
            )
        return None
    flat_x, flat_y = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
    for i, (xr, yr) in enumerate(zip(flat_x, flat_y, strict=True)):
        ratio = yr / xr
        if not np.allclose(ratio, ratio[0], rtol=1e-6):
            return (
                f"Centring: for {where(case)}, output record {i} is not the input record "
                f"times one number: RMSNorm must not shift the record."
            )
    return None


def population_variance_spec(
    kind: NormKind, grade_id: str = "population_variance", *, points: float
) -> CheckSpec:
    """The population variance (mean square for RMSNorm): divide by n, not n - 1."""
    stat = kind.statistic_name
    count = "the number of records, not one less" if kind.leading_axes else "d, not d - 1"

    def explain(seen, closest):
        case, x, y = seen.case, kind.x_of(seen.case), seen.value
        if closest is None:
            m2 = kind.statistic(y)
            r = first_beyond(m2 - 1, 1e-4)
            if r is None:
                return None
            return (
                f"Scale: for {where(case)}, output {kind.unit} {record(r)} has {stat} "
                f"{fmt(m2[r])}, not 1: divide by the square root of the population {stat} "
                f"(divide by n, not n - 1)."
            )
        n = int(np.prod([x.shape[a] for a in closest.axes]))
        evidence = evidence_of_difference(y, output_of(seen, closest, divisor="n"))
        if closest.divisor == "n-1":
            return (
                f"Sample variance: for {where(case)}, {kind.function} divides the sum of squares "
                f"by n - 1 = {n - 1} (np.var(ddof=1), torch.var's default). {kind.title} uses "
                f"the population {stat}: divide by n = {n}, so every output is "
                f"sqrt({n - 1}/{n}) = {np.sqrt((n - 1) / n):.4f} times too small." + evidence
            )
        return (
            f"Sum of squares: for {where(case)}, {kind.function} divides by the root of the "
            f"sum of squares (an L2 norm), not of their mean: the {stat} divides by n = {n}, "
            f"so your outputs are sqrt({n}) times too small." + evidence
        )

    return choice_cell(
        population_variance_spec,
        kind,
        grade_id,
        "divisor",
        explain,
        f"population {stat}: divide by {count}",
        misconception=f"the sample {stat} (n - 1), or a sum of squares",
        points=points,
    )


ZHANG_SENNRICH_EPS = 1e-8  # their code's default, added to the rms


def _other_convention(kind: NormKind, case: Case, computed: str) -> str:
    """RMSNorm's eps outside the root: another convention, not ps4's contract."""
    theirs, ours = (f"{e:g}".replace("e-0", "e-") for e in (ZHANG_SENNRICH_EPS, kind.default_eps))
    return (
        f"eps outside the square root: for {where(case)}, {kind.function} computes "
        f"{computed}. That is a different convention, not a mistake: Zhang and "
        f"Sennrich's own code divides by rms + eps, with eps = {theirs}. This "
        f"problem set's contract is eps inside the root, x / sqrt(mean(x^2) + eps) with "
        f"eps = {ours} (as torch.nn.RMSNorm computes it); the two differ on records "
        f"near zero."
    )


def eps_placement_spec(
    kind: NormKind, grade_id: str = "eps_placement", *, points: float
) -> CheckSpec:
    """eps inside the square root, the argument honoured, the default right.

    For LayerNorm and batch-norm eps inside the root is the papers' formula (Ba, Kiros and
    Hinton, 2016, arXiv:1607.06450; Ioffe and Szegedy, 2015). For RMSNorm it is ps4's
    contract, not the only convention: Zhang and Sennrich's code
    (https://github.com/bzhangGo/rmsnorm) divides by rms + eps with eps = 1e-8, and
    torch.nn.RMSNorm adds eps inside the root with a default of eps=None (the dtype's
    machine epsilon), so the message calls the other placement a different convention.
    """

    def explain(seen, closest):
        if closest is None:
            return _eps_property(seen, kind)
        case = seen.case
        z = output_of(seen, closest, eps_mode="inside", fixed_eps=0.0)
        evidence = evidence_of_difference(seen.value, z) + warned(seen.result)
        if closest.eps_mode == "outside" and not kind.center:
            computed = "(x - mu) / (sigma + eps)" if closest.center else "x / (rms + eps)"
            return _other_convention(kind, case, computed) + evidence
        if closest.eps_mode == "outside":
            return (
                f"eps outside the square root: for {where(case)}, {kind.function} computes "
                f"(x - mu) / (sigma + eps). The paper adds eps to the variance, inside the "
                f"root: (x - mu) / sqrt(sigma^2 + eps); the two differ on records of small "
                f"variance." + evidence
            )
        if closest.eps_mode == "none":
            return (
                f"No eps: for {where(case)}, {kind.function} divides by sqrt(sigma^2) alone, "
                f"so a record of zero variance gives 0/0 = NaN and one of tiny variance is "
                f"blown up. Add eps to the variance inside the square root." + evidence
            )
        if case.meta["eps_passed"] is None:
            params = ", ".join(kind.param_names[:-1])
            return (
                f"Default eps: for {where(case)} (eps not passed), {kind.function} uses eps = "
                f"{closest.fixed_eps:g}; its default must be eps={kind.default_eps:g}, as in "
                f"{kind.function}({params}, eps={kind.default_eps:g})." + evidence
            )
        return (
            f"eps ignored: for {where(case)}, {kind.function} used eps = {closest.fixed_eps:g} "
            f"instead of the eps it was given. Use the argument." + evidence
        )

    return choice_cell(
        eps_placement_spec,
        kind,
        grade_id,
        "eps",
        explain,
        "eps inside the square root, the argument honoured",
        misconception="eps outside the square root, missing or ignored",
        points=points,
        other_eps=() if kind.center else (ZHANG_SENNRICH_EPS,),
    )


def _eps_property(seen, kind: NormKind) -> str | None:
    """No member of the family matches: is the output finite, with the statistic eps gives?"""
    case, y, eps = seen.case, seen.value, seen.case.meta["eps"]
    right = formulas.Formula(kind.correct_axes(y.ndim), kind.center, "n", "inside")
    z = output_of(seen, right)
    if not np.all(np.isfinite(y)):
        r = first_index(~np.isfinite(y))
        zero = "beta" if kind.has_beta else "0"
        return (
            f"eps: for {where(case)}, your output has {y[r]} at {record(r)}"
            f"{warned(seen.result)}: a {kind.unit} of zero {kind.statistic_name} must give "
            f"{zero}, eps inside the square root keeps the division finite."
        )
    if not kind.center:  # Zhang and Sennrich's default, x / (rms + 1e-8)?
        theirs = seen.oracle.formula_outputs(kind.x_of(case), ZHANG_SENNRICH_EPS)
        if formulas.same(y, theirs[replace(right, eps_mode="outside")]):
            return _other_convention(kind, case, "x / (rms + 1e-8)") + evidence_of_difference(y, z)
    got, want = kind.statistic(y), kind.statistic(z)
    r = first_beyond(got - want, 1e-3 * np.abs(want) + 1e-9)
    if r is not None:
        return (
            f"eps: for {where(case)}, output record {record(r)} has {kind.statistic_name} "
            f"{fmt(got[r])}; eps = {eps:g} inside the square root gives {fmt(want[r])}."
        )
    return None
