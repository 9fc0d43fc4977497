"""Every assignment through the sandboxed grader: the class that test_nbgrader.py grades with
plain `nbgrader autograde` (the source notebook, the blank release and the kernel witnesses
among the mutants, mutants.KERNEL_WITNESSES: every mutant whose verdicts carry a rule across
cells, a voided function, "not judged", "same cause as"), graded again by `python -m
normlab.course grade <assignment>` in a course of its own, gets the same score in every cell;
the source every autograded point, the blank release none, and the written answers wait for a
human (no autograded score).

ps7's reuse witnesses call normlab, which the sandbox answers while a check runs, as a
notebook kernel would (`normlab.course.grader.answers.ANSWERED`). ps8 grades a torch module:
its kernels get the real torch (`normlab.grading.REAL_TORCH`), and its reuse witness calls
torch.nn.functional.layer_norm, found inside the sandbox as in a notebook kernel.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from course_helpers import read, release_path, source_path
from demo_course import UID_BASE, build_course, course_env, write_submission
from mutants import answers, kernel_witnesses, mutant_student, released_with

from normlab.grading import ASSIGNMENTS, CHECKS

pytestmark = [pytest.mark.slow, pytest.mark.kernels]


def _gradebook_scores(course, assignment: str) -> dict[str, dict[str, tuple]]:
    """student -> grade_id -> (score, auto_score, needs_manual_grade)."""
    from nbgrader.api import Gradebook

    found: dict[str, dict[str, tuple]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's deprecation chatter
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            for submission in gb.assignment_submissions(assignment):
                cells = found.setdefault(submission.student.id, {})
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        cells[grade.name] = (
                            grade.score,
                            grade.auto_score,
                            grade.needs_manual_grade,
                        )
    return found


def the_class(assignment: str) -> dict:
    """student -> notebook: the source, the blank release, the assignment's kernel witnesses."""
    class_ = {"honest": read(source_path(assignment)), "blank": read(release_path(assignment))}
    for mutant in kernel_witnesses():
        if mutant.assignment == assignment:
            class_[mutant_student(mutant)] = released_with(assignment, answers(mutant))
    return class_


def test_the_sandboxed_grader_scores_every_class_as_nbgrader_does(graded_course, tmp_path):
    course = build_course(tmp_path / "course", ASSIGNMENTS)
    for assignment in ASSIGNMENTS:
        class_ = the_class(assignment)
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
        assert set(sandboxed) == set(class_), assignment
        for student in class_:
            plain = graded_course.scores(assignment, student)
            assert {g: s for g, (s, _, _) in sandboxed[student].items()} == {
                g: score for g, (score, _, _) in plain.items()
            }, (assignment, student)
            manual = [auto for _, auto, waits in sandboxed[student].values() if waits]
            assert manual.count(None) == len(manual), (assignment, student)
        autograded = CHECKS[assignment]
        honest = sum(sandboxed["honest"][gid][0] for gid in autograded)
        assert honest == sum(spec.points for spec in autograded.values()), assignment
        assert {sandboxed["blank"][gid][0] for gid in autograded} == {0.0}, assignment
