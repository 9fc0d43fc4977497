"""`run_case` and `run_cases` in the student's own kernel: `normlab_sandbox.guarded.run_case`
with each `Ref` resolved by the install's backing (`backing`)."""

from __future__ import annotations

from normlab_sandbox import guarded
from normlab_sandbox.cases import Case, Result

from . import backing


def run_case(namespace: dict, case: Case, owners: dict | None = None) -> Result:
    """One `Case` under guards; `owners`: every graded function of the notebook (name -> object)."""
    return guarded.run_case(namespace, case, backing.current().resolve, owners)


def run_cases(namespace: dict, cases: list[Case]) -> list[Result]:
    """`run_case` for each case, in order (state a function keeps between calls shows)."""
    return [run_case(namespace, case) for case in cases]
