"""Every check's battery: the cases it runs on, visible and hidden. Never shipped.

A battery is `make(rng, hidden) -> [Case]` (`make(rng, hidden, variant)` for a check that
varies), its visible cases first, so the hidden battery starts with the visible one. A set's own
checks are mapped to theirs by the module here named as the assignment (`BATTERIES`, keyed by
the check objects); a cell a shared builder made runs on that builder's battery (`norm.SHARED`,
`values`). `cases` draws it from a random stream of its own (`random_inputs.rng_for(seed, salt)`).
"""

from __future__ import annotations

import importlib.util
from functools import cache, partial

from normlab_sandbox.cases import Case

from ...grading.spec import CheckSpec
from ...grading.values import value_spec
from ..random_inputs import rng_for
from . import norm


def values(spec, rng, hidden: bool, variant: dict | None = None) -> list[Case]:
    """The battery of a `value_spec` check: a case reading each target, visible and hidden
    alike, carrying a variant's record and d_model (ps1)."""
    meta = {}
    if variant is not None:
        meta = {"record": tuple(variant["record"]), "d_model": int(variant["d_model"])}
    return [Case(name, "get", tag="value", label=name, meta=meta) for name in spec.targets]


@cache
def _own(assignment: str) -> dict:
    """The BATTERIES of the assignment's module here ({} when it has none)."""
    name = f"{__name__}.{assignment}"
    return importlib.import_module(name).BATTERIES if importlib.util.find_spec(name) else {}


def battery(spec: CheckSpec):
    """The make(rng, hidden[, variant]) of `spec`'s battery."""
    if spec in (own := _own(spec.assignment)):
        return own[spec]
    if spec.builder in norm.SHARED:
        return partial(norm.SHARED[spec.builder], spec.kind)
    if spec.builder is value_spec:
        return partial(values, spec)
    raise LookupError(f"no battery for {spec.assignment}'s check {spec.grade_id}")


def cases(spec: CheckSpec, seed: int, hidden: bool, variant: dict | None = None) -> list:
    """`spec`'s battery drawn with its own random stream (on `variant` for a check that varies)."""
    make = battery(spec)
    rng = rng_for(seed, spec.salt)
    return make(rng, hidden, variant) if spec.varies else make(rng, hidden)
