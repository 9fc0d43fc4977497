"""`run_case` and `run_cases` in the student's own kernel, with the graders' trusted callables.

The guarded call itself is `normlab_sandbox.guarded.run_case` (it also runs in the grading
sandbox's kernel, where normlab is never loaded); here each `Ref` a case carries resolves to
the trusted callable of `trusted` (the correct LayerNorm, a planted wrong one, a scripted
clock), or in a student download to its recorded replay (`recording.resolve`).
"""

from __future__ import annotations

from normlab_sandbox import guarded
from normlab_sandbox.cases import Case, Result

from . import recording


def run_case(namespace: dict, case: Case, owners: dict | None = None) -> Result:
    """Call the student's code for one `Case` under guards (see normlab_sandbox.guarded);
    `owners`: every graded function of the notebook (name -> object)."""
    return guarded.run_case(namespace, case, recording.resolve, owners)


def run_cases(namespace: dict, cases: list[Case]) -> list[Result]:
    """`run_case` for each case, in order (state a function keeps between calls shows)."""
    return [run_case(namespace, case) for case in cases]
