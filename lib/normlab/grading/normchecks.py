"""Check builders shared by every normalization the students write.

LayerNorm (ps2), batch-norm (ps3) and RMSNorm (ps4) are one formula with
different choices (see `normlab.grading.family`), so their grade cells are built
from the same pieces, each reading one choice or one promise:

    axis            statistics over the right axes, for any number of leading axes
    centering       subtract the mean (LayerNorm) or not (RMSNorm)
    divisor         population variance / mean square: divide by n, not n - 1
    eps             eps inside the square root, the argument honoured, the default right
    affine          gamma (and beta) per feature, after normalizing
    independence    no record changes another, alone = inside a batch, no state
    dtype_and_shape a NumPy array of the input's shape and float dtype
    input_untouched the arguments are not written into
    numerics        float32 far from zero (offset 1e4) as good as near zero
    reuse           no library normalization called
    batch_of_one    (batch-norm) a single record raises ValueError

Judges that read a choice ask which members of the family the student's output
matches; when it matches none (a bug the family does not know), they fall back on
the property itself. Either way a bug costs the cells of its own misconception.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from . import family
from .cases import Case
from .evidence import array_output, failure_of_call, fmt, record, warned, where, worst
from .spec import CheckSpec
from .tripwire import TRIPWIRE_REMOVED


@dataclass(frozen=True)
class NormKind:
    """What the student's normalization should be."""

    function: str  # the student's function name
    title: str  # LayerNorm, batch-norm, RMSNorm
    center: bool
    leading_axes: bool  # statistics over every leading axis (batch-norm) or the last
    has_beta: bool
    default_eps: float

    def correct_axes(self, ndim: int) -> tuple[int, ...]:
        return tuple(range(ndim - 1)) if self.leading_axes else (ndim - 1,)

    @property
    def param_names(self) -> tuple[str, ...]:
        return ("x", "gamma", "beta", "eps") if self.has_beta else ("x", "gamma", "eps")

    def signature(self) -> str:
        return f"{self.function}({', '.join(self.param_names[:-1])}, eps={self.default_eps:g})"


LAYER_NORM = NormKind("layer_norm", "LayerNorm", True, False, True, 1e-5)
BATCH_NORM = NormKind("batch_norm", "batch-norm", True, True, True, 1e-5)
RMS_NORM = NormKind("rms_norm", "RMSNorm", False, False, False, 1e-6)


# ---------------------------------------------------------------- data and cases


def rng_for(seed: int, salt: str) -> np.random.Generator:
    """An independent random stream per (seed, check): cases never depend on each other."""
    return np.random.default_rng([seed, *salt.encode()])


def messy(rng, shape, *, spread=(0.5, 50.0), offset=3.0) -> np.ndarray:
    """Records on different scales and offsets (std from spread[0] to spread[1]).

    Features get their own scale too, so that statistics down any axis differ from
    statistics along any other: a wrong axis cannot be right by coincidence.
    """
    lead = (*shape[:-1], 1)
    lo, hi = np.log10(spread[0]), np.log10(spread[1])
    scale = 10.0 ** rng.uniform(lo, hi, size=lead)
    shift = scale * rng.uniform(-offset, offset, size=lead)
    feature_scale = 10.0 ** rng.uniform(-0.3, 0.3, size=shape[-1])
    return shift + scale * feature_scale * rng.standard_normal(shape)


def call(kind: NormKind, x, *, gamma=None, beta=None, eps=None, tag="", label="", **meta) -> Case:
    """A call of the student's function; eps is passed only when it is not the default."""
    x = np.asarray(x)
    d = x.shape[-1]
    gamma = np.ones(d, dtype=x.dtype) if gamma is None else np.asarray(gamma)
    beta = np.zeros(d, dtype=x.dtype) if beta is None else np.asarray(beta)
    args = (x, gamma, beta) if kind.has_beta else (x, gamma)
    if eps is not None:
        args = (*args, eps)
    if not label:
        dims = f"{x.ndim}-D input of shape {x.shape}" if x.ndim != 1 else f"record of {d}"
        label = f"a {dims}" + (f", eps = {eps:g}" if eps is not None else "")
        if x.dtype != np.float64:
            label += f", {x.dtype}"
    meta = {"eps": kind.default_eps if eps is None else float(eps), "eps_passed": eps, **meta}
    return Case(kind.function, "call", args, tag=tag, label=label, meta=meta)


# ------------------------------------------------------------------ family cells


def _wrongness(v: family.Variant, kind: NormKind, ndim: int, eps: float) -> int:
    good_eps = v.eps_mode == "inside" or (v.eps_mode == "fixed" and v.fixed_eps == eps)
    return (
        (v.axes != kind.correct_axes(ndim))
        + (v.center != kind.center)
        + (v.divisor != "n")
        + (not good_eps)
    )


def _family_judge(kind: NormKind, accept, explain, fallback, cases, results):
    """Shared judge: pass a case when a matching variant is right on this cell's choice."""
    for case, result in zip(cases, results, strict=True):
        y, problem = array_output(kind.function, case, result)
        if problem:
            return problem
        x = np.asarray(case.args[0], dtype=np.float64)
        eps = case.meta["eps"]
        matches = family.matching(x, eps, y)
        if any(accept(v, case) for v in matches):
            continue
        if matches:
            closest = min(matches, key=lambda v: _wrongness(v, kind, x.ndim, eps))
            return explain(closest, case, x, y, result)
        message = fallback(case, x, y, result)
        if message:
            return message
    return None


def correct_variant(kind: NormKind, ndim: int) -> family.Variant:
    """The member of the family the student should have written."""
    return family.Variant(kind.correct_axes(ndim), kind.center, "n", "inside")


def _first_difference(y, z) -> tuple:
    index = worst(y, z, family.MATCH_RTOL, family.MATCH_ATOL)
    return index if index is not None else (0,) * np.ndim(y)


def _record_evidence(x, y, z, index, ndim_lead: bool = True) -> str:
    r = tuple(index[:-1])
    if not r:
        return f" You returned {fmt(y)}; expected {fmt(z)}."
    return f" Record {record(r)}: you returned {fmt(y[r])}; expected {fmt(z[r])}."


# axis ------------------------------------------------------------------------


def _axis_property_holds(kind: NormKind, x, y) -> bool:
    """Unknown variant: is each record (batch-norm: each feature) an affine map of itself?"""
    if kind.leading_axes:
        x, y = x.reshape(-1, x.shape[-1]).T, y.reshape(-1, y.shape[-1]).T
    else:
        x, y = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
    for xr, yr in zip(x, y, strict=True):
        design = np.stack([xr, np.ones_like(xr)], axis=1)
        coef, *_ = np.linalg.lstsq(design, yr, rcond=None)
        if not np.all(np.abs(design @ coef - yr) <= 1e-6 * (1 + np.abs(yr).max())):
            return False
    return True


def axis_spec(kind: NormKind, grade_id: str = "axis") -> CheckSpec:
    where_ = "every leading axis" if kind.leading_axes else "the last axis"

    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        shapes = [(4, 5), (2, 3, 4)] if kind.leading_axes else [(3, 5), (2, 3, 4)]
        if hidden:
            shapes += [(6, 6), (2, 3, 2, 5), (3, 1, 7)]
            if not kind.leading_axes:
                shapes += [(7,), (1, 6)]
        return [call(kind, messy(rng, s), tag="axis") for s in shapes]

    def accept(v, case):
        return v.axes == kind.correct_axes(np.ndim(case.args[0]))

    def explain(v, case, x, y, result):
        right = kind.correct_axes(x.ndim)
        z = family.normalize(x, replace(v, axes=right), case.meta["eps"])
        evidence = _record_evidence(x, y, z, _first_difference(y, z))
        return (
            f"Wrong axis: for {where(case)}, {kind.function} takes its statistics over "
            f"{family.describe_axes(v.axes, x.ndim)}. {kind.title} takes them over "
            f"{family.describe_axes(right, x.ndim)}, for any number of leading axes "
            f"(use axis=-1{' and keepdims=True' if not kind.leading_axes else ''})." + evidence
        )

    def fallback(case, x, y, result):
        if _axis_property_holds(kind, x, y):
            return None
        return (
            f"Wrong axis: for {where(case)}, the output is not each "
            f"{'feature' if kind.leading_axes else 'record'} rescaled by its own statistics: "
            f"{kind.title} takes its mean and variance over {where_}."
        )

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        partial(_family_judge, kind, accept, explain, fallback),
        f"{kind.title}: statistics over {where_}",
    )


# centering --------------------------------------------------------------------


def centering_spec(kind: NormKind, grade_id: str = "centering") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        # records whose mean is far from zero relative to their spread: centring shows
        shapes = [(3, 5)] + ([(2, 3, 6), (5, 5)] if hidden else [])
        cases = [call(kind, messy(rng, s, offset=6.0), tag="centering") for s in shapes]
        return [call(kind, np.array([[1.0, 2.0, 3.0, 4.0]]), tag="centering"), *cases]

    def accept(v, case):
        return v.center == kind.center

    def explain(v, case, x, y, result):
        z = family.normalize(x, replace(v, center=kind.center), case.meta["eps"])
        evidence = _record_evidence(x, y, z, _first_difference(y, z))
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

    def fallback(case, x, y, result):
        if kind.center:
            axes = kind.correct_axes(x.ndim)
            mean = y.mean(axis=axes)
            bad = ~(np.abs(mean) <= 1e-6 * (1 + np.abs(y).max()))
            if bad.any():
                r = np.argwhere(bad)[0]
                return (
                    f"No centring: for {where(case)}, output record {record(r)} has mean "
                    f"{fmt(mean[tuple(r)])}, not 0: subtract each record's mean."
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

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        partial(_family_judge, kind, accept, explain, fallback),
        "subtracts the mean" if kind.center else "does not subtract the mean",
    )


# divisor ----------------------------------------------------------------------


def divisor_spec(kind: NormKind, grade_id: str = "population_variance") -> CheckSpec:
    stat = "variance" if kind.center else "mean square"

    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        # large spread: eps is negligible, only the divisor shows
        shapes = [(3, 4), (2, 3, 5)] + ([(8, 8), (2, 2, 3, 6)] if hidden else [])
        return [call(kind, messy(rng, s, spread=(2.0, 40.0)), tag="divisor") for s in shapes]

    def accept(v, case):
        return v.divisor == "n"

    def explain(v, case, x, y, result):
        n = int(np.prod([x.shape[a] for a in v.axes]))
        z = family.normalize(x, replace(v, divisor="n"), case.meta["eps"])
        evidence = _record_evidence(x, y, z, _first_difference(y, z))
        if v.divisor == "n-1":
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

    def fallback(case, x, y, result):
        axes = kind.correct_axes(x.ndim)
        m2 = (y * y).mean(axis=axes) if not kind.center else y.var(axis=axes)
        bad = ~(np.abs(m2 - 1) <= 1e-4)
        if bad.any():
            r = tuple(np.argwhere(bad)[0])
            return (
                f"Scale: for {where(case)}, output {'feature' if kind.leading_axes else 'record'} "
                f"{record(r)} has {stat} {fmt(m2[r])}, not 1: divide by the square root of the "
                f"population {stat} (divide by n, not n - 1)."
            )
        return None

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        partial(_family_judge, kind, accept, explain, fallback),
        f"population {stat}: divide by n, not n - 1",
    )


# eps --------------------------------------------------------------------------


def _eps_block(rng, kind: NormKind) -> np.ndarray:
    """Three records of variance 1e-6, one constant record, two ordinary ones.

    For batch-norm the same block is transposed: the features carry the tiny and
    the zero variance. RMSNorm's tiny records sit at zero (its statistic is the
    mean square), LayerNorm's anywhere.
    """
    d = 6 if not kind.leading_axes else 5
    base = rng.uniform(-5, 5, size=(3, 1)) if kind.center else 0.0
    tiny = base + 1e-3 * rng.standard_normal((3, d))  # variance about 1e-6 < eps = 1e-5
    constant = np.full((1, d), 3.0 if kind.center else 0.0)
    normal = messy(rng, (2, d), spread=(0.5, 5.0))
    block = np.concatenate([tiny, constant, normal])  # (6, d)
    return block.T.copy() if kind.leading_axes else block


def eps_spec(kind: NormKind, grade_id: str = "eps_placement") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        block = _eps_block(rng, kind)
        small = "features" if kind.leading_axes else "records"
        cases = [
            call(kind, block, tag="eps", label=f"{small} of variance 1e-6 and 0 ({block.shape})"),
            call(kind, messy(rng, (4, 3), spread=(0.05, 0.2)), eps=0.1, tag="eps"),
        ]
        if hidden:
            cases += [
                call(kind, block * 10.0, eps=1e-3, tag="eps"),
                call(kind, messy(rng, (2, 3, 5), spread=(0.01, 0.05)), eps=1e-3, tag="eps"),
                call(kind, block.reshape(1, *block.shape), tag="eps"),
            ]
        return cases

    def accept(v, case):
        eps = case.meta["eps"]
        return v.eps_mode == "inside" or (v.eps_mode == "fixed" and v.fixed_eps == eps)

    def explain(v, case, x, y, result):
        eps = case.meta["eps"]
        z = family.normalize(x, replace(v, eps_mode="inside", fixed_eps=0.0), eps)
        index = _first_difference(y, z)
        evidence = _record_evidence(x, y, z, index) + warned(result)
        if v.eps_mode == "outside":
            return (
                f"eps outside the square root: for {where(case)}, {kind.function} computes "
                f"(x - mu) / (sigma + eps). The paper adds eps to the variance, inside the "
                f"root: (x - mu) / sqrt(sigma^2 + eps); the two differ on records of small "
                f"variance." + evidence
            )
        if v.eps_mode == "none":
            return (
                f"No eps: for {where(case)}, {kind.function} divides by sqrt(sigma^2) alone, "
                f"so a record of zero variance gives 0/0 = NaN and one of tiny variance is "
                f"blown up. Add eps to the variance inside the square root." + evidence
            )
        if case.meta["eps_passed"] is None:
            return (
                f"Default eps: for {where(case)} (eps not passed), {kind.function} uses eps = "
                f"{v.fixed_eps:g}; its default must be eps={kind.default_eps:g}, as in "
                f"{kind.signature()}." + evidence
            )
        return (
            f"eps ignored: for {where(case)}, {kind.function} used eps = {v.fixed_eps:g} "
            f"instead of the eps it was given. Use the argument." + evidence
        )

    def fallback(case, x, y, result):
        eps = case.meta["eps"]
        z = family.normalize(x, correct_variant(kind, x.ndim), eps)
        if not np.all(np.isfinite(y)):
            r = tuple(np.argwhere(~np.isfinite(y))[0])
            return (
                f"eps: for {where(case)}, your output has {y[r]} at {record(r)}"
                f"{warned(result)}: a record of zero variance must give beta, eps inside the "
                f"square root keeps the division finite."
            )
        axes = kind.correct_axes(x.ndim)
        got = y.var(axis=axes) if kind.center else (y * y).mean(axis=axes)
        want = z.var(axis=axes) if kind.center else (z * z).mean(axis=axes)
        bad = ~(np.abs(got - want) <= 1e-3 * np.abs(want) + 1e-9)
        if bad.any():
            r = tuple(np.argwhere(bad)[0])
            return (
                f"eps: for {where(case)}, output record {record(r)} has "
                f"{'variance' if kind.center else 'mean square'} {fmt(got[r])}; eps = {eps:g} "
                f"inside the square root gives {fmt(want[r])}."
            )
        return None

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        partial(_family_judge, kind, accept, explain, fallback),
        "eps inside the square root, the argument honoured",
    )


# affine -----------------------------------------------------------------------


def affine_spec(kind: NormKind, grade_id: str = "gain_and_bias") -> CheckSpec:
    """gamma (and beta) scale and shift each normalized feature: judged against the student's
    own output with gamma = 1 and beta = 0, so no other misconception can leak in."""

    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        # the seed's example: gamma_1 = 2 doubles only the first normalized feature
        gamma = np.array([2.0, 1.0, 1.0, 1.0])
        beta = np.array([0.0, 0.0, 0.0, 0.5]) if kind.has_beta else None
        setups = [(messy(rng, (3, 4)), gamma, beta)]
        if hidden:
            for shape in [(5, 5), (2, 3, 6)]:
                d = shape[-1]
                g = rng.uniform(0.5, 3.0, size=d) * rng.choice([-1.0, 1.0], size=d)
                b = rng.normal(size=d) if kind.has_beta else None
                setups.append((messy(rng, shape), g, b))
        cases = []
        for pair, (x, g, b) in enumerate(setups):
            cases.append(call(kind, x, tag="plain", pair=pair))
            cases.append(call(kind, x, gamma=g, beta=b, tag="affine", pair=pair))
        return cases

    def judge(cases, results):
        for i in range(0, len(cases), 2):
            plain_case, affine_case = cases[i], cases[i + 1]
            y1, problem = array_output(kind.function, plain_case, results[i])
            if problem:
                return problem
            yg, problem = array_output(kind.function, affine_case, results[i + 1])
            if problem:
                return problem
            gamma = np.asarray(affine_case.args[1], dtype=np.float64)
            beta = np.asarray(affine_case.args[2], dtype=np.float64) if kind.has_beta else 0.0
            expected = gamma * y1 + beta
            scale = 1.0 + np.abs(expected).max()
            index = worst(yg, expected, 1e-6, 1e-8 * scale)
            if index is None:
                continue
            return _affine_message(kind, affine_case, y1, yg, gamma, beta, expected, index)
        return None

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        judge,
        "gamma (and beta) per feature, after normalizing",
    )


def _affine_message(kind, case, y1, yg, gamma, beta, expected, index) -> str:
    has_beta = kind.has_beta
    params = "gamma and beta" if has_beta else "gamma"
    head = f"Gain{' and bias' if has_beta else ''}: for {where(case)} with gamma = {fmt(gamma)}"
    head += f" and beta = {fmt(beta)}" if has_beta else ""

    def near(z) -> bool:
        return worst(yg, z, 1e-6, 1e-8 * (1 + np.abs(z).max())) is None

    if near(y1):
        why = f"{params} had no effect: the output is the same as with gamma = 1" + (
            ", beta = 0." if has_beta else "."
        )
    elif has_beta and near(beta * y1 + gamma):
        why = "gamma and beta are swapped: beta scales and gamma shifts."
    elif (
        y1.ndim >= 2
        and y1.shape[-2] == y1.shape[-1]
        and near(gamma[:, None] * y1 + (beta[:, None] if has_beta else 0.0))
    ):
        why = (
            f"{params} were applied per record (down the rows), not per feature: on a square "
            "input a (d, 1)-shaped gamma broadcasts the wrong way. gamma[k] scales feature k."
        )
    elif has_beta and near(gamma * y1):
        why = "beta was not added: each feature k gets gamma[k] * x_hat[k] + beta[k]."
    elif has_beta and near(y1 + beta):
        why = "gamma was not applied: each feature k gets gamma[k] * x_hat[k] + beta[k]."
    else:
        why = (
            f"the output is not gamma[k] * x_hat[k]{' + beta[k]' if has_beta else ''} of your "
            "own normalized x_hat (your output with gamma = 1): apply them after normalizing."
        )
    r = tuple(index[:-1])
    k = int(index[-1])
    return (
        f"{head}, {why} Record {record(r) if r else 0}, feature {k}: expected "
        f"{fmt(expected[index])}, got {fmt(yg[index])}."
    )


# independence -----------------------------------------------------------------


def independence_spec(kind: NormKind, grade_id: str = "independence") -> CheckSpec:
    """No record influences another, in a batch or across calls (the seed's audit).

    The calls run in this order: a batch, another batch, the first batch again (a
    function with state gives a different answer now), then the batch with one
    record changed, then single records alone. The judge reads "again" first, so a
    function with state is told about its state, not about crossing an axis.
    """

    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        shapes = [(2, 3, 5)] + ([(3, 4, 4)] if hidden else [])
        cases = []
        for block, shape in enumerate(shapes):
            x = messy(rng, shape)
            b, t, d = shape
            cases.append(call(kind, x, tag="base", block=block))
            cases.append(call(kind, messy(rng, shape) * 100.0, tag="other", block=block))
            cases.append(call(kind, x, tag="again", block=block))
            for target in ((0, t - 1), (b - 1, 0)):
                x2 = x.copy()
                x2[target] = x2[target] * 7.0 + 10.0 * np.arange(d)  # not a shift or scale
                cases.append(call(kind, x2, tag="changed", block=block, record=target))
            alone = (b - 1, t - 1)
            cases.append(
                call(kind, x[alone][None, None, :], tag="alone", block=block, record=alone)
            )
            if hidden:
                cases.append(call(kind, x[(0, 0)], tag="alone", block=block, record=(0, 0)))
        return cases

    order = {"base": 0, "other": 1, "again": 2, "changed": 3, "alone": 4}

    def judge(cases, results):
        outputs = []
        for case, result in zip(cases, results, strict=True):
            y, problem = array_output(kind.function, case, result)
            if problem:
                return problem
            outputs.append(y)
        base = {
            c.meta["block"]: (np.asarray(c.args[0]), y)
            for c, y in zip(cases, outputs, strict=True)
            if c.tag == "base"
        }
        for rank in range(2, 5):
            for case, y in zip(cases, outputs, strict=True):
                if order[case.tag] == rank:
                    message = _independence_message(kind, case, y, *base[case.meta["block"]])
                    if message:
                        return message
        return None

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        judge,
        "records independent: alone = in a batch, no state",
    )


def _independence_message(kind: NormKind, case: Case, y, x0, y0) -> str | None:
    if case.tag == "again":
        gap = np.abs(y - y0).max()
        if not gap <= 1e-10:
            return (
                f"Independence: calling {kind.function} again on the same input, after another "
                f"call, gave a different output (by up to {gap:.3g}): your function keeps state "
                f"between calls (running statistics?). {kind.title} has none: training and "
                f"inference compute the same thing."
            )
    elif case.tag == "changed":
        target = case.meta["record"]
        moved = np.abs(y - y0).max(axis=-1)  # (B, T)
        own = moved[target]
        moved[target] = 0.0
        if moved.max() > 1e-10:
            across = moved.copy()
            across[target[0]] = 0.0
            pick = across if across.max() > 1e-10 else moved
            other = tuple(int(i) for i in np.unravel_index(np.argmax(pick), pick.shape))
            axis = "the batch axis" if other[0] != target[0] else "the token axis"
            return (
                f"Independence: changing record {target} changed record {other} (by up to "
                f"{moved[other]:.3g}): your statistics cross {axis}. Each record is normalized "
                f"with its own features only."
            )
        if not own > 1e-6:
            return (
                f"Independence: changing record {target} of a {x0.shape} input did not change "
                f"its own output: {kind.function} ignores its input there."
            )
    elif case.tag == "alone":
        r = case.meta["record"]
        gap = np.abs(y.reshape(-1) - y0[r]).max()
        if not gap <= 1e-10:
            return (
                f"Independence: record {r} alone ({where(case)}) gives a different output than "
                f"inside its batch (by up to {gap:.3g}): a batch of one must normalize exactly as "
                f"a batch of many."
            )
    return None


# dtype and shape ---------------------------------------------------------------


def dtype_shape_spec(kind: NormKind, grade_id: str = "dtype_and_shape") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        specs = [((5, 7), np.float64), ((2, 3, 6), np.float32)]
        if hidden:
            specs += [((2, 3, 2, 5), np.float64), ((6, 6), np.float32), ((4, 3, 5), np.float64)]
        return [
            call(kind, messy(rng, shape, spread=(0.5, 5.0)).astype(dtype), tag="dtype")
            for shape, dtype in specs
        ]

    def judge(cases, results):
        for case, result in zip(cases, results, strict=True):
            problem = failure_of_call(kind.function, case, result)
            if problem:
                return problem
            x = case.args[0]
            if result.output_type != "numpy.ndarray":
                return (
                    f"Type: for {where(case)}, {kind.function} returned {result.output_type}, "
                    f"not a NumPy array."
                )
            y = result.output
            if y.shape != x.shape:
                return (
                    f"Shape: for {where(case)}, {kind.function} returned shape {y.shape}; the "
                    f"output has the input's shape {x.shape} (keepdims=True keeps the "
                    f"statistics broadcastable)."
                )
            if y.dtype != x.dtype:
                return (
                    f"dtype: for {where(case)}, {kind.function} returned {y.dtype}; a {x.dtype} "
                    f"input gives a {x.dtype} output (compute in float64 if you like, then "
                    f"cast back with .astype(x.dtype))."
                )
        return None

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        judge,
        "returns an array of the input's shape and dtype",
    )


# input untouched ---------------------------------------------------------------


def untouched_spec(kind: NormKind, grade_id: str = "input_untouched") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        shapes = [(3, 5)] + ([(2, 3, 4)] if hidden else [])
        cases = []
        for shape in shapes:
            d = shape[-1]
            beta = rng.normal(size=d) if kind.has_beta else None
            cases.append(
                call(kind, messy(rng, shape), gamma=rng.uniform(0.5, 2, d), beta=beta, tag="io")
            )
        return cases

    def judge(cases, results):
        for case, result in zip(cases, results, strict=True):
            problem = failure_of_call(kind.function, case, result)
            if problem:
                return problem
            if result.modified_inputs:
                key = result.modified_inputs[0]
                name = kind.param_names[key] if isinstance(key, int) else key
                return (
                    f"Input modified: {kind.function} wrote into its argument {name} "
                    f"({where(case)}). In-place updates such as `{name} -= ...` change the "
                    f"caller's array; compute into a new array instead."
                )
        return None

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        judge,
        "does not write into its arguments",
    )


# numerics ----------------------------------------------------------------------


def numerics_spec(kind: NormKind, grade_id: str = "numerics") -> CheckSpec:
    """float32 far from zero: the student's own float64 answer on the same numbers is the yardstick.

    The records sit at an offset of 1e4 with a spread of about 1. The student's
    function, given the very same values in float64, computes its own answer
    accurately; in float32 a one-pass E[x^2] - E[x]^2 variance cancels (about 1e8
    minus 1e8, where float32 resolves steps of 8) and the two answers part.
    Comparing a function with itself keeps every other misconception out.
    """

    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        setups = [((3, 4, 8), 1e4)]
        if hidden:
            setups += [((6, 16), 1e4), ((4, 5, 12), -3e4)]
        cases = []
        for pair, (shape, offset) in enumerate(setups):
            far32 = (offset + rng.normal(size=shape)).astype(np.float32)
            far64 = far32.astype(np.float64)  # exactly the same numbers
            label = f"float32 records at offset {offset:g} with spread 1, shape {shape}"
            cases.append(call(kind, far64, tag="float64", pair=pair, label=label))
            cases.append(call(kind, far32, tag="float32", pair=pair, label=label))
        return cases

    def judge(cases, results):
        for i in range(0, len(cases), 2):
            case64, case32 = cases[i], cases[i + 1]
            y64, problem = array_output(kind.function, case64, results[i])
            if problem:
                return problem
            y32, problem = array_output(kind.function, case32, results[i + 1])
            if problem:
                return problem
            index = worst(y32, y64, 0.0, 2e-2 * (1 + np.abs(y64).max()))
            if index is None:
                continue
            r = tuple(index[:-1])
            return (
                f"Numerics: for {where(case32)}, record {record(r)} gives {fmt(y32[r])}, but "
                f"your own function on the same numbers in float64 gives {fmt(y64[r])}"
                f"{warned(results[i + 1])}. Far from zero, E[x^2] - E[x]^2 subtracts two huge, "
                f"nearly equal numbers and the variance cancels (it can even turn negative): "
                f"subtract the mean first, then average the squares (two passes)."
            )
        return None

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        judge,
        "float32 records far from zero (no cancellation)",
    )


# reference reuse ---------------------------------------------------------------

LIBRARY_PREFIXES = ("normlab.", "torch.")


def reuse_message(function: str, calls, forbidden=LIBRARY_PREFIXES) -> str | None:
    """The message when a call reached a library normalization, else None."""
    if TRIPWIRE_REMOVED in calls:
        return (
            f"Reference reuse: {function} removed the grader's profile hook (sys.setprofile), "
            f"so the grader cannot see what it calls; this cell scores 0."
        )
    hits = [c for c in calls if c.startswith(forbidden)]
    if not hits:
        return None
    return (
        f"Reference reuse: {function} called {hits[0]}. Calling a library implementation "
        f"earns no points for this cell (the other cells still grade your numbers); write the "
        f"computation yourself with NumPy."
    )


def reuse_spec(kind: NormKind, grade_id: str = "reference_reuse") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        shapes = [(3, 5)] + ([(2, 3, 4)] if hidden else [])
        return [call(kind, messy(rng, s), tag="reuse") for s in shapes]

    def judge(cases, results):
        for case, result in zip(cases, results, strict=True):
            message = reuse_message(kind.function, result.reference_calls)
            if message:
                return message
            problem = failure_of_call(kind.function, case, result)
            if problem:
                return problem
        return None

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        judge,
        "written by hand: no library normalization called",
    )


# batch of one (batch-norm) -------------------------------------------------------


def batch_of_one_spec(kind: NormKind, grade_id: str = "batch_of_one") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        cases = [
            call(kind, messy(rng, (1, 5)), tag="one"),
            call(kind, messy(rng, (2, 5)), tag="two"),
        ]
        if hidden:
            cases += [call(kind, messy(rng, (1, 1, 4)), tag="one")]
        return cases

    def judge(cases, results):
        for case, result in zip(cases, results, strict=True):
            if case.tag == "two":
                problem = failure_of_call(kind.function, case, result)
                if problem:
                    return problem
                continue
            if result.error is None:
                return (
                    f"Batch of one: for {where(case)} {kind.function} returned an output. One "
                    f"record per feature has nothing to average over: every output would be "
                    f"beta. Batch-norm needs a crowd; raise ValueError with a message."
                )
            if result.error[0] == "NotImplementedError":
                return failure_of_call(kind.function, case, result)
            if result.error[0] != "ValueError":
                return (
                    f"Batch of one: for {where(case)} {kind.function} raised {result.error[0]} "
                    f"({result.error[1]}); raise ValueError saying the batch is too small."
                )
        return None

    return CheckSpec(
        grade_id,
        (kind.function,),
        make_cases,
        judge,
        "a single record raises ValueError (batch-norm needs a crowd)",
    )
