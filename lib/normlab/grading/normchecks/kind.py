"""What the student's normalization should be (`NormKind`), and the cases that call it.

The random data every builder draws from (`rng_for`, `messy`; ps5 and ps6 draw theirs
from them too), `call`, one call of the student's function, and `norm_spec`, the
CheckSpec of a cell that calls it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from normlab_sandbox.cases import Case

from ..spec import CheckSpec


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

    @property
    def statistic_name(self) -> str:
        return "variance" if self.center else "mean square"

    def statistic(self, y: np.ndarray) -> np.ndarray:
        """What the normalization divides by, over the correct axes: variance or mean square."""
        axes = self.correct_axes(y.ndim)
        return y.var(axis=axes) if self.center else (y * y).mean(axis=axes)

    def signature(self) -> str:
        return f"{self.function}({', '.join(self.param_names[:-1])}, eps={self.default_eps:g})"


LAYER_NORM = NormKind("layer_norm", "LayerNorm", True, False, True, 1e-5)
BATCH_NORM = NormKind("batch_norm", "batch-norm", True, True, True, 1e-5)
RMS_NORM = NormKind("rms_norm", "RMSNorm", False, False, False, 1e-6)


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


def norm_spec(kind: NormKind, grade_id: str, make_cases, judge, summary: str) -> CheckSpec:
    """The CheckSpec of a cell that calls the student's normalization (kind.function)."""
    return CheckSpec(grade_id, (kind.function,), make_cases, judge, summary)
