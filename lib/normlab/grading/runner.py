"""`run_case` and `run_cases` in the student's own kernel, with the backing's trusted callables.

The guarded call itself is `normlab_sandbox.guarded.run_case` (it also runs in the grading
sandbox's kernel, where normlab is never loaded); here each `Ref` a case carries resolves to
the trusted callable of the install's backing (`backing`: the correct LayerNorm, a planted
wrong one, a scripted clock; in a student download, their recorded replay).
"""

from __future__ import annotations

from normlab_sandbox import guarded
from normlab_sandbox.cases import Case, Result

from . import backing


def run_case(namespace: dict, case: Case, owners: dict | None = None) -> Result:
    """Call the student's code for one `Case` under guards (see normlab_sandbox.guarded);
    `owners`: every graded function of the notebook (name -> object)."""
    return guarded.run_case(namespace, case, backing.current().resolve, owners)


def run_cases(namespace: dict, cases: list[Case]) -> list[Result]:
    """`run_case` for each case, in order (state a function keeps between calls shows)."""
    return [run_case(namespace, case) for case in cases]
