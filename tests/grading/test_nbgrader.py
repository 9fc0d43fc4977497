"""The course through nbgrader itself, on a temporary course (see conftest.graded_course).

- exercises/ is exactly what `nbgrader generate_assignment` makes from solutions/;
- each source notebook, submitted as is, scores full marks on every autograded cell;
- each released notebook, submitted unfilled, scores 0 on every autograded cell;
- each kernel witness among the mutants (mutants.KERNEL_WITNESSES), submitted as a student's
  released notebook, loses exactly the cells of its misconceptions: nbgrader sets
  NBGRADER_EXECUTION, so a failing check raises there and zeroes exactly its cell (every
  mutant and every planted bug of the bank is graded so cell by cell in process:
  test_mutants.py);
- generate_feedback's HTML holds no hidden test and no reference source.
"""

from __future__ import annotations

import html
import re

import pytest
from course_helpers import (
    REPO,
    autograded_cells,
    nbgrader,
    read,
    release_path,
    secret_region_lines,
    source_path,
)
from mutants import kernel_witnesses, mutant_student, witness_students

from normlab.grading import ASSIGNMENTS

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_released_notebook_is_what_generate_assignment_makes(graded_course, assignment):
    generated = graded_course.root / "exercises" / assignment / f"{assignment}.ipynb"
    committed = release_path(assignment)
    assert generated.read_text() == committed.read_text(), (
        f"{committed.relative_to(REPO)} has drifted from solutions/: run `make release`"
    )
    extra = sorted(p.name for p in committed.parent.iterdir()) != [committed.name]
    assert not extra, f"unexpected files next to {committed.name}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_notebook_scores_full_marks(graded_course, assignment):
    scores = graded_course.scores(assignment, "honest")
    auto = autograded_cells(read(source_path(assignment)))
    assert {g: s for g, (s, m, _) in scores.items() if g in auto} == auto
    manual = {g for g, (_, _, needs) in scores.items() if needs}
    assert manual == set(scores) - set(auto)  # only the written answer waits for a person


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_unfilled_release_scores_zero(graded_course, assignment):
    scores = graded_course.scores(assignment, "blank")
    assert set(scores) >= set(autograded_cells(read(source_path(assignment))))
    assert {g: s for g, (s, _, _) in scores.items()} == dict.fromkeys(scores, 0.0)


MUTANTS = kernel_witnesses()


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_a_mutant_loses_exactly_its_cells(graded_course, mutant):
    scores = graded_course.scores(mutant.assignment, mutant_student(mutant))
    auto = autograded_cells(read(source_path(mutant.assignment)))
    lost = {g for g, (s, m, _) in scores.items() if g in auto and s != m}
    assert lost == mutant.lost_at_grading
    assert all(scores[g][0] == 0.0 for g in lost)


def visible_text(page: str) -> str:
    """The text a reader sees: no style sheets, no scripts, no tags."""
    page = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _reference_lines() -> set[str]:
    """Distinctive lines of normlab's source (grading included) that feedback must not quote."""
    lines = set()
    for path in (REPO / "lib" / "normlab").rglob("*.py"):
        for line in path.read_text().splitlines():
            text = line.strip()
            if len(text) >= 30 and not text.startswith(("#", '"""', "from ", "import ")):
                lines.add(text)
    return lines


@pytest.mark.parametrize("assignment", ["ps2_layer_norm", "ps5_backward", "ps7_family"])
def test_feedback_has_no_hidden_tests_and_no_reference_source(graded_course, assignment):
    nbgrader(graded_course.root, "generate_feedback", assignment)
    students = ["blank", *witness_students(assignment)]
    released = release_path(assignment).read_text()
    forbidden = {line for line in _reference_lines() if line not in released}
    for student in students:
        page = graded_course.root / "feedback" / student / assignment / f"{assignment}.html"
        text = visible_text(page.read_text())
        assert "HIDDEN TESTS" not in text and "hidden=True" not in text, student
        submitted = graded_course.root / "submitted" / student / assignment
        own = "\n".join(c.source for c in read(submitted / f"{assignment}.ipynb").cells)
        leaked = [line for line in forbidden if line in text and line not in own]
        assert leaked == [], f"{student}: feedback quotes normlab's source: {leaked[:3]}"
        if student == "blank":
            solution = [line for line in secret_region_lines(assignment, 12) if line in text]
            assert solution == [], f"feedback shows the solution or hidden tests: {solution[:3]}"
            assert "not written yet" in text  # the failing check's message is there
        assert "Traceback" not in text and 'File "' not in text
