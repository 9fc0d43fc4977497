"""What the student's normalization should be (`NormKind`), and `call`, one call of it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from normlab_sandbox.cases import Case

from .. import formulas
from ..evidence import keepdims_cause, where
from ..judges import an_array
from ..spec import CheckSpec, check_spec
from ..verdict import Verdict

MISSING_KEEPDIMS = "missing_keepdims"  # a misconception of its own, whichever cell shows it


@dataclass(frozen=True, kw_only=True)
class NormKind:
    """What the student's normalization should be (by default, LayerNorm's choices)."""

    function: str  # the student's function name
    title: str  # LayerNorm, batch-norm, RMSNorm
    center: bool = True
    leading_axes: bool = False  # statistics over every leading axis (batch-norm) or the last
    has_beta: bool = True
    default_eps: float = 1e-5

    def correct_axes(self, ndim: int) -> tuple[int, ...]:
        return tuple(range(ndim - 1)) if self.leading_axes else (ndim - 1,)

    @property
    def param_names(self) -> tuple[str, ...]:
        return ("x", "gamma", "beta", "eps") if self.has_beta else ("x", "gamma", "eps")

    @property
    def statistic_name(self) -> str:
        return "variance" if self.center else "mean square"

    def statistic(self, y: np.ndarray) -> np.ndarray:
        """What the normalization divides by, over the correct axes: variance or mean square."""
        axes = self.correct_axes(y.ndim)
        return y.var(axis=axes) if self.center else (y * y).mean(axis=axes)

    @property
    def who(self) -> str:
        return self.function

    read = staticmethod(an_array)  # reader: the output as a float64 array of x's shape

    @staticmethod
    def x_of(case: Case) -> np.ndarray:
        """The input x of the normalization, in float64 (its first argument)."""
        return np.asarray(case.args[0], dtype=np.float64)

    def axes_of(self, case: Case) -> tuple[int, ...]:
        return self.correct_axes(np.ndim(case.args[0]))

    def matches(self, seen) -> list:
        """The formulas the output matches on the case's input (`formula_match`)."""
        outputs = seen.oracle.formula_outputs(self.x_of(seen.case), seen.case.meta["eps"])
        return formulas.matching(seen.value, outputs)

    def fallback(self, seen) -> Verdict | None:
        """The output matches no formula: the verdict when it is what statistics that lost
        their axis give, else None.

        A mean of shape x.shape[:-1] (no keepdims) raises a broadcast error against x, except
        when the leading shape lines up with the features, as on a square input: then record i
        is centred and scaled with the statistics of record k for feature k, and no error
        shows.
        """
        if self.leading_axes:
            return None
        x, eps = self.x_of(seen.case), seen.case.meta["eps"]
        mean, var = seen.oracle.statistics(x)[(x.ndim - 1,), 0]  # (...,): one per record
        if mean.ndim == 0:
            return None  # one record: its statistics have no axis to lose
        if any(m not in (1, n) for m, n in zip(mean.shape, x.shape[1:], strict=True)):
            return None  # they do not broadcast against x, or not to its shape
        gamma = np.asarray(seen.case.args[1], dtype=np.float64)
        beta = np.asarray(seen.case.args[2], dtype=np.float64) if self.has_beta else 0.0
        statistic = var if self.center else var + mean * mean  # what it divides by: (...,)
        centres = [(mean[..., None], True), (mean, False)] if self.center else [(0.0, True)]
        for centre, centre_kept in centres:
            xc = x - centre
            scales = [
                (statistic[..., None], True),
                (statistic, False),
                ((xc * xc).mean(axis=-1), False),  # the variance of the misaligned centring
            ]
            for scale, scale_kept in scales:
                if centre_kept and scale_kept:
                    continue  # the correct normalization
                with np.errstate(divide="ignore", invalid="ignore"):
                    z = gamma * xc / np.sqrt(scale + eps) + beta
                if formulas.same(seen.value, z):
                    return Verdict(
                        MISSING_KEEPDIMS,
                        f"Missing keepdims: for {where(seen.case)}, {self.function} "
                        f"normalizes record i with the statistics of record k at feature k. "
                        f"Its statistics over the last axis (shape {mean.shape}, one per "
                        f"record) lost that axis; on this input they still broadcast against "
                        f"x of shape {x.shape}, along the features, so no error shows. Keep "
                        f"the axis with keepdims=True (or mean[..., None]).",
                        cause=keepdims_cause(self.function),
                    )
        return None

    @property
    def unit(self) -> str:
        """What one set of statistics describes: a feature (batch-norm) or a record."""
        return "feature" if self.leading_axes else "record"


LAYER_NORM = NormKind(function="layer_norm", title="LayerNorm")
BATCH_NORM = NormKind(function="batch_norm", title="batch-norm", leading_axes=True)
RMS_NORM = NormKind(
    function="rms_norm", title="RMSNorm", center=False, has_beta=False, default_eps=1e-6
)


def call(kind: NormKind, x, *, gamma=None, beta=None, eps=None, tag="", label="", **meta) -> Case:
    """A call of the student's function; eps is passed only when it is not the default."""
    x = np.asarray(x)
    d = x.shape[-1]
    gamma = np.ones(d, dtype=x.dtype) if gamma is None else np.asarray(gamma)
    beta = np.zeros(d, dtype=x.dtype) if beta is None else np.asarray(beta)
    args = (x, gamma, beta) if kind.has_beta else (x, gamma)
    args += (eps,) if eps is not None else ()
    if not label:
        dims = f"{x.ndim}-D input of shape {x.shape}" if x.ndim != 1 else f"record of {d}"
        label = f"a {dims}" + (f", eps = {eps:g}" if eps is not None else "")
        label += f", {x.dtype}" if x.dtype != np.float64 else ""
    meta = {"eps": kind.default_eps if eps is None else float(eps), "eps_passed": eps, **meta}
    return Case(kind.function, "call", args, tag=tag, label=label, meta=meta)


def norm_cell(builder, kind: NormKind, grade_id: str, judge, summary: str, **fields) -> CheckSpec:
    """The cell of `kind`'s function that `builder` (a `<cell>_spec` of this package) makes:
    its battery is the builder's (`normlab.answer_key.batteries.norm`), for `kind`."""
    return check_spec(grade_id, kind.function, judge, summary, builder=builder, kind=kind, **fields)
