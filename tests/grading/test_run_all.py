"""Restart and Run All, as a student does it: every released notebook runs to its summary.

Each released notebook runs in a fresh kernel with nbclient and `allow_errors=False`, as
JupyterLab's *Kernel > Restart Kernel and Run All Cells…* would (a cell that raises stops the
run, and fails the test): blank, filled with the instructor's answers, and filled with each
mutant (mutants.py; ps1: one per question, the rest: every mutant, raising ones included).
The kernel's environment has no NBGRADER_EXECUTION, as a student's. Then every check cell
printed its line on stdout, ✓ or ✗ by what the checks conclude, a ✗ with its message, and
the summary counts the checks that pass and the points the failing ones lose.
"""

from __future__ import annotations

import os

import nbformat
import pytest
from course_helpers import (
    SUMMARY_CELL,
    TEST_STUDENT,
    nbgrader_meta,
    points_lost,
    read,
    release_path,
    source_path,
    summary_counts,
    with_student,
)
from mutants import MUTANTS, answers, released_with, run_as_students
from nbclient import NotebookClient
from test_mutants import verdicts_of

from normlab.grading import ASSIGNMENTS, CHECKS, pools, selfcheck
from normlab_sandbox import student_variant

pytestmark = pytest.mark.slow

BLANK, SOLUTION = "blank", "solution"
RUNS = [
    *((a, BLANK) for a in ASSIGNMENTS),
    *((a, SOLUTION) for a in ASSIGNMENTS),
    *((m.assignment, m.name) for m in run_as_students()),
]


def filled(assignment: str, which: str):
    """The released notebook: blank (ps1's STUDENT line empty too: its checks ask who the
    student is, and the notebook still runs to its summary), with the instructor's answers,
    or with a mutant's (as TEST_STUDENT)."""
    if which == BLANK:
        return read(release_path(assignment))
    if which == SOLUTION:
        cells = read(source_path(assignment)).cells
        answer = {nbgrader_meta(c)["grade_id"]: c.source for c in cells if is_answer(c)}
        return with_student(released_with(assignment, answer))
    mutant = next(m for m in MUTANTS if (m.assignment, m.name) == (assignment, which))
    return with_student(released_with(assignment, answers(mutant)))


def is_answer(cell) -> bool:
    return cell.cell_type == "code" and bool(nbgrader_meta(cell).get("solution"))


def lost_cells(assignment: str, which: str) -> set[str]:
    if which == BLANK:
        return set(CHECKS[assignment])
    if which == SOLUTION:
        return set()
    return set(next(m.lost for m in MUTANTS if (m.assignment, m.name) == (assignment, which)))


def note(assignment: str, which: str, grade_id: str) -> str | None:
    """The qualification of a passing visible check ("apart from the axes: see axis"), as the
    in-process run of the same answers gives it (test_mutants); None for the solution."""
    if which in (BLANK, SOLUTION):
        return None
    mutant = next(m for m in MUTANTS if (m.assignment, m.name) == (assignment, which))
    return verdicts_of(mutant)["visible"][grade_id].note


def run_all(nb):
    """Restart and Run All: a fresh kernel, every cell in order, the first error fatal."""
    env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"}
    for attempt in (1, 2):
        client = NotebookClient(nb, timeout=300, allow_errors=False, kernel_name="python3")
        try:
            client.execute(env=env)
            return nb
        except RuntimeError as err:
            # a kernel that died while starting (under CI's load, before any cell ran): start
            # one more; a cell's own error is never retried
            if attempt == 2 or "Kernel died before replying to kernel_info" not in str(err):
                raise
    return nb


def stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


@pytest.mark.parametrize(("assignment", "which"), RUNS, ids=[f"{a}:{w}" for a, w in RUNS])
def test_restart_and_run_all_reaches_the_summary_and_counts_the_points_lost(assignment, which):
    nb = run_all(nbformat.from_dict(filled(assignment, which)))
    checks = CHECKS[assignment]
    lost = lost_cells(assignment, which)
    by_id = {nbgrader_meta(c).get("grade_id"): c for c in nb.cells}
    for grade_id, spec in checks.items():
        cell = by_id[grade_id]
        kinds = {(o.output_type, o.get("name")) for o in cell.outputs}
        assert kinds == {("stream", "stdout")}, (grade_id, cell.outputs)  # nothing on stderr
        shown = stdout(cell)
        if grade_id in lost:
            assert shown.startswith(selfcheck.check_line(spec, "✗") + "\n  "), shown
        else:  # a tick says what else is wrong, as the in-process check says it
            assert shown == selfcheck.passed_line(spec, note(assignment, which, grade_id)) + "\n"
    summary = stdout(by_id[SUMMARY_CELL])
    total = sum(spec.points for spec in checks.values())
    lost_points = sum(checks[g].points for g in lost)
    assert summary_counts(summary) == (
        len(checks) - len(lost),
        len(checks),
        total - lost_points,
        total,
    )
    assert points_lost(summary) == lost_points
    if assignment in pools.POOLS and which == BLANK:  # no id: every check asks for it
        assert all(student_variant.ASK in stdout(by_id[g]) for g in checks)
        assert student_variant.ASK in summary
    elif assignment in pools.POOLS:
        assert f"These checks ran on the numbers of {TEST_STUDENT}" in summary
    for grade_id, spec in checks.items():
        if grade_id in lost:
            assert selfcheck.check_line(spec, "✗") in summary
        else:
            assert selfcheck.check_line(spec, "✓", note(assignment, which, grade_id)) in summary
