"""The battery of every check of typed values (`normlab.grading.values.value_spec`)."""

from __future__ import annotations

from normlab_sandbox.cases import Case


def values(spec):
    """make(rng, hidden, variant=None): one case reading each of the check's targets, the same
    visible and hidden; on a student's variant (ps1) each case carries its record and d_model,
    which the judge's questions and messages follow."""

    def make(rng, hidden: bool, variant: dict | None = None) -> list[Case]:
        meta = {}
        if variant is not None:
            meta = {"record": tuple(variant["record"]), "d_model": int(variant["d_model"])}
        return [Case(name, "get", tag="value", label=name, meta=meta) for name in spec.targets]

    return make
