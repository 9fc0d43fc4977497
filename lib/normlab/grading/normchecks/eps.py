"""eps: inside the square root, the argument honoured, the default right."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from normlab_sandbox.cases import Case

from .. import family
from ..evidence import fmt, record, warned, where
from ..spec import CheckSpec
from .family_judge import correct_variant, evidence_of_difference, family_spec
from .kind import NormKind, call, messy, rng_for


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
        evidence = evidence_of_difference(y, z) + warned(result)
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
        got, want = kind.statistic(y), kind.statistic(z)
        bad = ~(np.abs(got - want) <= 1e-3 * np.abs(want) + 1e-9)
        if bad.any():
            r = tuple(np.argwhere(bad)[0])
            return (
                f"eps: for {where(case)}, output record {record(r)} has {kind.statistic_name} "
                f"{fmt(got[r])}; eps = {eps:g} inside the square root gives {fmt(want[r])}."
            )
        return None

    summary = "eps inside the square root, the argument honoured"
    return family_spec(kind, grade_id, make_cases, accept, explain, fallback, summary)
