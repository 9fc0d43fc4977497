"""normlab.grading: the checkers behind the course's nbgrader test cells.

Each autograded test cell of an assignment is one **check**, named by the cell's
nbgrader grade_id, one cell per misconception, and reads like nbgrader's example
course:

    \"\"\"Check that each record is normalized over its own features.\"\"\"
    check("axis", layer_norm)

The notebook's locked setup cell runs `use_assignment("ps2_layer_norm")` (ps1, whose
numbers are each student's own, `use_assignment("ps1_by_hand", student=STUDENT)` and
`r, d_model = my_variant()`: `pools`). A failed
check's message names the misconception and shows the smallest evidence ("changing
record (0, 2) changed record (1, 2) ...: your statistics cross the batch axis"). At
grading it is the AssertionError that zeroes the cell, so the gradebook itself says
which misconception a student holds; in a student's own kernel it is printed and the
notebook runs on (`selfcheck`). Expectations come from a private copy of the
reference (`normlab.answer_key.reference`, Ba, Kiros and Hinton, 2016,
arXiv:1607.06450), not from the `normlab` a student's kernel can patch.

The interface (stable; `normlab.course` runs the same checks out of the kernel)
---------------------------------------------------------------------------
ASSIGNMENTS          the assignment ids, in the course's order (CHECKS's keys)
REAL_TORCH           the assignments whose grading kernel imports the real torch (ps8)
CHECKS[assignment][grade_id] -> CheckSpec with
    targets          names read from the student's namespace, in `check`'s order
                     (functions to call; for ps1, plain values)
    make_cases(seed, hidden=True, variant=None) -> list[Case]
                     pure and deterministic. hidden=False: the visible battery the
                     released notebook runs; hidden=True (the default): the battery
                     autograde runs, the visible cases first, then the rest; a check
                     that `varies` (ps1) runs on the student's `variant` (`pools`)
    judge(cases, results, oracle) -> Verdict
                     pure: Verdict(category, message), the category "passed", "not
                     written", "crashed" or the misconception's name (see `verdict`);
                     expectations come from `oracle` (see `oracle`)
    summary          what the check wants, in a few words
    misconception    what it catches, in a few words (the class report's label)
    points           the grade cell's points (a test keeps them equal to the notebooks')
    category         the misconception's category name (by default the grade_id)
Case(target, how="call"|"get"|"probe", args, kwargs, tag, label, meta, probe)
                     inputs are NumPy arrays, Python scalars, strings, and `Ref`
                     (a trusted callable named by a string, e.g. Ref("red_team.wrong_axis"));
                     a probe (ps8) hands the student's class to normlab_sandbox.module_probes
Result(output, output_type, error, warnings, modified_inputs, reference_calls, probes)
                     plain data: arrays, tuples of arrays, scalars, strings
run_case(namespace, case) -> Result
                     calls the student's code in this process, with guards: array
                     inputs copied, warnings and stderr captured, exceptions caught,
                     writes into inputs detected, library normalizations noticed by
                     the tripwire (`normlab_sandbox.tripwire`)
run_check(spec, run_one, hidden=False, seed=0, oracle=ORACLE, variant=None) -> Verdict
                     make_cases -> run_one each -> judge; ORACLE is the live oracle, or in
                     a student download its replay of recorded answers (`recording`)
check(grade_id, *targets, hidden=False, assignment=None, seed=0)
                     run_check in this kernel; a visible check that passes prints
                     "✓ <grade_id>: <summary> (<points>)". A failure raises
                     AssertionError(message) while nbgrader grades (NBGRADER_EXECUTION is
                     set) and for the hidden battery; otherwise it prints the message
                     under "✗ <grade_id>: ..." and the notebook runs on
my_variant()         the student's own (r, d_model) for ps1, shown (`pools`)
try_it(function, *args)
                     a "try it" cell's call: its output, or the error printed (never raises)
summary(namespace)   every visible check on the notebook's globals(): how many pass, the
                     points they cover and lose, the cells graded by hand (the notebook's
                     last cell; never raises)

A source test cell runs `check(gid, *t)` and, inside its hidden-tests region,
`check(gid, *t, hidden=True)`. Because the hidden battery starts with the visible
cases, the cell passes at autograde exactly when
`spec.judge(cases, [run_case(ns, c) for c in cases], LIVE)` passes for
`cases = spec.make_cases(DEFAULT_SEED)`: that is what an out-of-kernel runner
computes, running `run_case` where the student's code lives and `judge` where it
never ran. `cell_verdict` does exactly that in one process.
"""

from __future__ import annotations

from functools import partial

from normlab_sandbox.cases import Case, Ref, Result

from .catalog import ASSIGNMENTS, CHECKS, MANUAL, REAL_TORCH
from .runner import run_case, run_cases
from .selfcheck import (
    SESSION,
    check,
    my_variant,
    reference_norms,
    run_check,
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
    own = namespace.get(SESSION)
    session = own if own is not None and own.assignment == assignment else Session(assignment)
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
