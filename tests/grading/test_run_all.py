"""Restart and Run All, as a student does it: every released notebook runs to its summary.

A student's Run All runs every cell in order, the first error fatal, in a kernel without
NBGRADER_EXECUTION. Then every check cell printed its line on stdout, and nothing on stderr,
✓ or ✗ by what the checks conclude, a ✗ with its message, a ✓ with its qualification as the
in-process check gives it, and the summary counts the checks that pass and the points the
failing ones lose. Proven at two layers with one assertion (`assert_reaches_the_summary`):

- every mutant, in the one in-process run of its graded notebook (mutants.graded_once,
  test_mutants.py), the cheap layer;
- real kernels (nbclient, `allow_errors=False`, as JupyterLab's *Kernel > Restart Kernel
  and Run All Cells…*): each notebook blank and with the instructor's answers, and one
  mutant of each assignment (its first kernel witness, mutants.KERNEL_WITNESSES), which show
  that a kernel adds nothing the in-process run misses. Every kernel witness runs in a real
  kernel under plain nbgrader and the sandboxed grader (test_nbgrader.py,
  test_sandbox_class.py), where the rules they carry across cells are compared.
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
from mutants import MUTANTS, answers, graded_once, kernel_witnesses, released_with
from nbclient import NotebookClient

from normlab.grading import ASSIGNMENTS, CHECKS, pools, selfcheck
from normlab_sandbox import student_variant

BLANK, SOLUTION = "blank", "solution"
FIRST_WITNESSES = {}  # assignment -> its first kernel witness
for _mutant in kernel_witnesses():
    FIRST_WITNESSES.setdefault(_mutant.assignment, _mutant)
KERNEL_RUNS = [
    *((a, BLANK) for a in ASSIGNMENTS),
    *((a, SOLUTION) for a in ASSIGNMENTS),
    *((m.assignment, m.name) for m in FIRST_WITNESSES.values()),
]


def mutant_of(assignment: str, which: str):
    return next(m for m in MUTANTS if (m.assignment, m.name) == (assignment, which))


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
    return with_student(released_with(assignment, answers(mutant_of(assignment, which))))


def is_answer(cell) -> bool:
    return cell.cell_type == "code" and bool(nbgrader_meta(cell).get("solution"))


def lost_cells(assignment: str, which: str) -> set[str]:
    if which == BLANK:
        return set(CHECKS[assignment])
    if which == SOLUTION:
        return set()
    return set(mutant_of(assignment, which).lost)


def notes(assignment: str, which: str) -> dict[str, str | None]:
    """grade_id -> the qualification of its visible check ("apart from the axes: see axis"), as
    the in-process run of the same answers gives it (mutants.graded_once); None for the blank
    notebook and the solution."""
    if which in (BLANK, SOLUTION):
        return dict.fromkeys(CHECKS[assignment])
    visible = graded_once(mutant_of(assignment, which)).verdicts()["visible"]
    return {grade_id: verdict.note for grade_id, verdict in visible.items()}


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


@pytest.mark.slow
@pytest.mark.parametrize(
    ("assignment", "which"), KERNEL_RUNS, ids=[f"{a}:{w}" for a, w in KERNEL_RUNS]
)
def test_restart_and_run_all_reaches_the_summary_and_counts_the_points_lost(assignment, which):
    nb = run_all(nbformat.from_dict(filled(assignment, which)))
    shown = {}
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        kinds = {(o.output_type, o.get("name")) for o in cell.outputs}
        clean = kinds <= {("stream", "stdout")}  # nothing on stderr, no error, no value
        shown[nbgrader_meta(cell).get("grade_id")] = (stdout(cell), clean)
    student = None if which == BLANK else TEST_STUDENT
    lost, noted = lost_cells(assignment, which), notes(assignment, which)
    assert_reaches_the_summary(assignment, shown, lost, noted, student)


def assert_reaches_the_summary(
    assignment: str, shown: dict, lost: set[str], notes: dict, student: str | None
) -> None:
    """`shown`: grade_id -> (the cell's stdout, whether it showed nothing else), of a run that
    reached its last cell; `lost`: the grade_ids of the checks that fail, `notes` each passing
    one's qualification; `student`: whose numbers a check that varies ran on (None: the
    notebook names no one)."""
    checks = CHECKS[assignment]
    for grade_id, spec in checks.items():
        text, clean = shown[grade_id]
        assert clean, (grade_id, text)
        if grade_id in lost:
            assert text.startswith(selfcheck.check_line(spec, "✗") + "\n  "), text
        else:  # a tick says what else is wrong, as the in-process check says it
            assert text == selfcheck.passed_line(spec, notes[grade_id]) + "\n"
    summary = shown[SUMMARY_CELL][0]
    total = sum(spec.points for spec in checks.values())
    lost_points = sum(checks[g].points for g in lost)
    assert summary_counts(summary) == (
        len(checks) - len(lost),
        len(checks),
        total - lost_points,
        total,
    )
    assert points_lost(summary) == lost_points
    if assignment in pools.POOLS and student is None:  # no id: asked once, where it is set
        assert all(student_variant.NOT_KNOWN in shown[g][0] for g in checks)
        assert student_variant.NOT_KNOWN in summary
        assert sum(text.count(student_variant.ASK) for text, _ in shown.values()) == 1
    elif assignment in pools.POOLS:
        assert f"These checks ran on the numbers of {student}" in summary
    for grade_id, spec in checks.items():
        if grade_id in lost:
            assert selfcheck.check_line(spec, "✗") in summary
        else:
            assert selfcheck.check_line(spec, "✓", notes[grade_id]) in summary
