"""Every check's battery: the cases it runs on, visible and hidden. Never shipped.

    BATTERIES[assignment][grade_id] -> make(rng, hidden) -> [Case]
                                        make(rng, hidden, variant) for a check that
                                        varies per student (`CheckSpec.varies`)

one module per assignment, named as the assignment, beside the shared `norm` (the
normalization cells), `gradients` (the backward passes') and `values` (cells that read typed
values). A battery's visible
cases come first; `hidden=True` adds the rest, so the hidden battery starts with the
visible one. `make_cases_of(assignment, spec)` is a spec's battery with a random stream of
its own (`random_inputs.rng_for(seed, spec.salt)`): no check's cases depend on another's.
`normlab.grading.recording` binds them, when a check first runs.
"""

from __future__ import annotations

import importlib

from ...grading.catalog import ASSIGNMENTS
from ...grading.spec import DEFAULT_SEED, CheckSpec
from ..random_inputs import rng_for

# one module per assignment, named as the assignment: its BATTERIES, by grade_id
BATTERIES = {a: importlib.import_module(f"{__name__}.{a}").BATTERIES for a in ASSIGNMENTS}


def make_cases_of(assignment: str, spec: CheckSpec):
    """`spec`'s make_cases(seed, hidden, variant): its battery, with a random stream of its
    own; on the student's variant for a check that varies (which refuses to run without)."""
    make = BATTERIES[assignment][spec.grade_id]

    def made(seed: int = DEFAULT_SEED, hidden: bool = True, variant: dict | None = None):
        if not spec.varies:
            return make(rng_for(seed, spec.salt), hidden)
        if variant is None:
            raise ValueError(f"{assignment}'s checks run on a student's variant: pass one")
        return make(rng_for(seed, spec.salt), hidden, variant)

    return made
