"""What the student's normalization should be (`NormKind`), and `call`, one call of it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from normlab_sandbox.cases import Case


@dataclass(frozen=True, kw_only=True)
class NormKind:
    """What the student's normalization should be."""

    function: str  # the student's function name
    title: str  # LayerNorm, batch-norm, RMSNorm
    center: bool
    leading_axes: bool  # statistics over every leading axis (batch-norm) or the last
    has_beta: bool
    default_eps: float
    cells: tuple[tuple[str, str | None], ...] = ()  # choice -> the grade cell that reads it

    @property
    def cell_of(self) -> dict[str, str | None]:
        """{choice: grade_id} of the cells that read the family's choices (`qualified`)."""
        return dict(self.cells)

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

    @property
    def unit(self) -> str:
        """What one set of statistics describes: a feature (batch-norm) or a record."""
        return "feature" if self.leading_axes else "record"


LAYER_NORM = NormKind(
    function="layer_norm",
    title="LayerNorm",
    center=True,
    leading_axes=False,
    has_beta=True,
    default_eps=1e-5,
    cells=(
        ("axes", "axis"),
        ("center", "centering"),
        ("divisor", "population_variance"),
        ("eps", "eps_placement"),
    ),
)
BATCH_NORM = NormKind(
    function="batch_norm",
    title="batch-norm",
    center=True,
    leading_axes=True,
    has_beta=True,
    default_eps=1e-5,
    cells=(
        ("axes", "bn_axis"),
        ("center", None),
        ("divisor", "bn_population_variance"),
        ("eps", "bn_eps_placement"),
    ),
)
RMS_NORM = NormKind(
    function="rms_norm",
    title="RMSNorm",
    center=False,
    leading_axes=False,
    has_beta=False,
    default_eps=1e-6,
    cells=(
        ("axes", "rms_axis"),
        ("center", "rms_no_centering"),
        ("divisor", "rms_mean_square"),
        ("eps", "rms_eps"),
    ),
)


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
