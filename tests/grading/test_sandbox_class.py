"""ps7_family and ps8_in_a_model through the sandboxed grader: the class that test_nbgrader.py
grades with plain `nbgrader autograde` (the source notebook, the blank release, every planted
bug of the bank), graded again by `python -m normlab.course grade <assignment>` in a course of
its own, gets the same score in every cell.

ps7's reuse submission calls normlab, which the sandbox answers while a check runs, as a
notebook kernel would (`normlab.course.grader.answers.ANSWERED`); a torch submission would differ on
purpose (torch is not in ps7's sandbox), so its bank has none. ps8 grades a torch module: its
kernels get the real torch (`normlab.grading.REAL_TORCH`), and its bank's reuse submission
calls torch.nn.functional.layer_norm, found inside the sandbox as in a notebook kernel.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from course_bank import BANK
from course_helpers import read, release_path, source_path, with_bug
from demo_course import UID_BASE, build_course, course_env, write_submission

from normlab.grading import CHECKS

pytestmark = [pytest.mark.slow, pytest.mark.kernels]


def _gradebook_scores(course, assignment: str) -> dict[str, dict[str, float | None]]:
    from nbgrader.api import Gradebook

    found: dict[str, dict[str, float | None]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's deprecation chatter
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            for submission in gb.assignment_submissions(assignment):
                cells = found.setdefault(submission.student.id, {})
                for notebook in submission.notebooks:
                    cells.update({grade.name: grade.score for grade in notebook.grades})
    return found


@pytest.mark.parametrize("assignment", ["ps7_family", "ps8_in_a_model"])
def test_the_sandboxed_grader_scores_the_class_as_nbgrader_does(
    graded_course, tmp_path, assignment
):
    class_ = {"honest": read(source_path(assignment)), "blank": read(release_path(assignment))}
    for bug, (edits, _) in BANK[assignment].items():
        class_[bug] = with_bug(read(source_path(assignment)), edits)
    course = build_course(tmp_path / "course", (assignment,))
    for student, nb in class_.items():
        write_submission(course, student, nb, assignment)
    grade = [sys.executable, "-m", "normlab.course", "grade", assignment, "--jobs", "2"]
    done = subprocess.run(
        [*grade, "--no-progress", "--uid-base", str(UID_BASE)],
        cwd=course,
        env=course_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    sandboxed = _gradebook_scores(course, assignment)
    assert set(sandboxed) == set(class_)
    for student in class_:
        plain = {g: score for g, (score, _, _) in graded_course.scores(assignment, student).items()}
        assert sandboxed[student] == plain, student
    autograded = CHECKS[assignment]
    honest = sum(sandboxed["honest"][gid] for gid in autograded)
    assert honest == sum(spec.points for spec in autograded.values())
    assert {sandboxed["blank"][gid] for gid in autograded} == {0.0}
