"""The battery of a check of plain values (`normlab.grading.values.value_spec`)."""

from __future__ import annotations

from normlab_sandbox.cases import Case


def gets(*targets: str):
    """make(rng, hidden): one case reading each target; the same visible and hidden."""

    def make(rng, hidden: bool) -> list[Case]:
        return [Case(name, "get", tag="value", label=name) for name in targets]

    return make
