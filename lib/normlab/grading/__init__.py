"""normlab.grading: the checkers behind the course's nbgrader test cells.

One check per autograded cell (its grade_id, one misconception), whose failure message names
the misconception and its smallest evidence; expectations come from the install's backing
(`backing`), a private copy of the reference (Ba, Kiros and Hinton, 2016, arXiv:1607.06450),
never from the `normlab` a student's kernel can patch. How a notebook becomes a grade:
ARCHITECTURE.md, "From a student's notebook to a grade".

The interface (stable; `normlab.course` runs the same checks out of the kernel):
ASSIGNMENTS, CHECKS, MANUAL, REAL_TORCH (`catalog`); `CheckSpec` (`spec`); `Case`, `Ref`,
`Result` (`normlab_sandbox.cases`); `run_case` (`runner`); `Verdict` (`verdict`); `check`,
`run_check`, `use_assignment`, `my_variant`, `try_it`, `summary`, `reference_norms`
(`selfcheck`); `cell_verdict` below.

A source test cell runs `check(gid, *t)` and, in its hidden-tests region,
`check(gid, *t, hidden=True)`. The hidden battery starts with the visible cases, so the cell
passes at autograde exactly when its hidden battery's judge passes: `cell_verdict` computes
that in one process, as an out-of-kernel runner does with `run_case` in the kernel and the
judge where the student's code never ran.
"""

from __future__ import annotations

from functools import partial

from normlab_sandbox.cases import Case, Ref, Result

from .catalog import ASSIGNMENTS, CHECKS, MANUAL, REAL_TORCH
from .runner import run_case, run_cases
from .selfcheck import (
    check,
    my_variant,
    reference_norms,
    run_check,
    session_of,
    summary,
    try_it,
    use_assignment,
)
from .session import Session
from .spec import DEFAULT_SEED, CheckSpec
from .verdict import Verdict


def cell_verdict(
    assignment: str,
    grade_id: str,
    namespace: dict,
    seed: int = DEFAULT_SEED,
    variant: dict | None = None,
) -> Verdict:
    """The `Verdict` of grade cell `grade_id` at autograde for `namespace` (its hidden
    battery), under the notebook's session if its setup cell ran in `namespace` (its policy,
    and for ps1 its student's numbers, or `variant`)."""
    spec = CHECKS[assignment][grade_id]
    session = session_of(namespace, assignment)
    if variant is not None:
        session = Session(assignment, session.policy, variant)
    return session.judge(spec, partial(run_case, namespace), hidden=True, seed=seed)


__all__ = [
    "ASSIGNMENTS",
    "CHECKS",
    "DEFAULT_SEED",
    "MANUAL",
    "REAL_TORCH",
    "Case",
    "CheckSpec",
    "Ref",
    "Result",
    "Verdict",
    "cell_verdict",
    "check",
    "my_variant",
    "reference_norms",
    "run_case",
    "run_cases",
    "run_check",
    "summary",
    "try_it",
    "use_assignment",
]
