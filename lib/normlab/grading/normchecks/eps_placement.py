"""eps_placement: eps inside the square root, the argument honoured, the default right.

For LayerNorm and batch-norm eps inside the root is the papers' formula (Ba, Kiros and
Hinton, 2016, arXiv:1607.06450; Ioffe and Szegedy, 2015). For RMSNorm it is ps4's
contract, not the only convention: Zhang and Sennrich's code
(https://github.com/bzhangGo/rmsnorm) divides by rms + eps with eps = 1e-8, and
torch.nn.RMSNorm adds eps inside the root with a default of eps=None (the dtype's
machine epsilon), so the message calls the other placement a different convention.
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from .. import formulas
from ..evidence import first_beyond, first_index, fmt, record, warned, where
from ..spec import CheckSpec
from .formula_match import (
    choice_cell,
    correct_formula,
    evidence_of_difference,
    output_of,
)
from .kind import NormKind

ZHANG_SENNRICH_EPS = 1e-8  # their code's default, added to the rms


def _zhang_sennrich(seen, kind: NormKind):
    """RMSNorm with Zhang and Sennrich's default, x / (rms + 1e-8), on the case's input."""
    x = kind.x_of(seen.case)
    variant = formulas.Formula(kind.correct_axes(x.ndim), False, "n", "outside")
    return seen.oracle.formula_outputs(x, ZHANG_SENNRICH_EPS)[variant]


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
    def explain(seen, closest):
        if closest is None:
            return _property(seen, kind)
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
            return (
                f"Default eps: for {where(case)} (eps not passed), {kind.function} uses eps = "
                f"{closest.fixed_eps:g}; its default must be eps={kind.default_eps:g}, as in "
                f"{kind.signature()}." + evidence
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


def _property(seen, kind: NormKind) -> str | None:
    """No member of the family matches: is the output finite, with the statistic eps gives?"""
    case, y, eps = seen.case, seen.value, seen.case.meta["eps"]
    z = output_of(seen, correct_formula(kind, y.ndim))
    if not np.all(np.isfinite(y)):
        r = first_index(~np.isfinite(y))
        zero = "beta" if kind.has_beta else "0"
        return (
            f"eps: for {where(case)}, your output has {y[r]} at {record(r)}"
            f"{warned(seen.result)}: a {kind.unit} of zero {kind.statistic_name} must give "
            f"{zero}, eps inside the square root keeps the division finite."
        )
    if not kind.center and formulas.same(y, _zhang_sennrich(seen, kind)):
        return _other_convention(kind, case, "x / (rms + 1e-8)") + evidence_of_difference(y, z)
    got, want = kind.statistic(y), kind.statistic(z)
    r = first_beyond(got - want, 1e-3 * np.abs(want) + 1e-9)
    if r is not None:
        return (
            f"eps: for {where(case)}, output record {record(r)} has {kind.statistic_name} "
            f"{fmt(got[r])}; eps = {eps:g} inside the square root gives {fmt(want[r])}."
        )
    return None
