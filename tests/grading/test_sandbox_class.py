"""ps7_family through the sandboxed grader: the class that test_nbgrader.py grades with plain
`nbgrader autograde` (the source notebook, the blank release, every planted bug of the bank),
graded again by `python -m normlab.course grade ps7_family` in a course of its own, gets the
same score in every cell. The bank's reuse submission calls normlab, which the sandbox answers
while a check runs, as a notebook kernel would (`normlab.course.answers.ANSWERED`); a torch
submission would differ on purpose (torch is not in the sandbox), so the bank has none.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from course_bank import BANK
from course_helpers import read, release_path, source_path, with_bug
from demo_course import build_course, course_env, write_submission

PS7 = "ps7_family"

pytestmark = pytest.mark.slow


def _gradebook_scores(course) -> dict[str, dict[str, float | None]]:
    from nbgrader.api import Gradebook

    found: dict[str, dict[str, float | None]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's deprecation chatter
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            for submission in gb.assignment_submissions(PS7):
                cells = found.setdefault(submission.student.id, {})
                for notebook in submission.notebooks:
                    cells.update({grade.name: grade.score for grade in notebook.grades})
    return found


def test_the_sandboxed_grader_scores_the_ps7_class_as_nbgrader_does(graded_course, tmp_path):
    class_ = {"honest": read(source_path(PS7)), "blank": read(release_path(PS7))}
    for bug, (edits, _) in BANK[PS7].items():
        class_[bug] = with_bug(read(source_path(PS7)), edits)
    course = build_course(tmp_path / "course", (PS7,))
    for student, nb in class_.items():
        write_submission(course, student, nb, PS7)
    done = subprocess.run(
        [sys.executable, "-m", "normlab.course", "grade", PS7, "--jobs", "2", "--no-progress"],
        cwd=course,
        env=course_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    sandboxed = _gradebook_scores(course)
    assert set(sandboxed) == set(class_)
    for student in class_:
        plain = {g: score for g, (score, _, _) in graded_course.scores(PS7, student).items()}
        assert sandboxed[student] == plain, student
    assert sum(sandboxed["honest"].values()) == 25.0
    assert set(sandboxed["blank"].values()) == {0.0}
