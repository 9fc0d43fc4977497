"""One temporary nbgrader course, generated, submitted to and autograded once per test run.

Students: "honest" submits each source notebook as is, "blank" each released notebook
unfilled, and the kernel witnesses among the mutants (mutants.KERNEL_WITNESSES) one student
each, the released notebook with the mutant's answers (`mutant_student` names them). Every
mutant and every planted bug of the bank is graded cell by cell in process, as nbgrader
grades it (test_mutants.py); this course shows that nbgrader itself agrees. One
`nbgrader generate_assignment "*"` releases every assignment and one `nbgrader autograde "*"`
grades every submission (nbgrader reads the id as a glob: the same scores as one call per
assignment, a process start each saved). Everything lives under pytest's
tmp folder: the repo never gets a gradebook or a submitted/ folder.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from course_helpers import (
    nbgrader,
    new_course,
    read,
    release_path,
    source_path,
    submit,
)
from mutants import answers, kernel_witnesses, mutant_student, released_with
from run_once import once

from normlab.grading import ASSIGNMENTS


@dataclass
class GradedCourse:
    root: Path
    seconds: dict[str, float] = field(default_factory=dict)

    def scores(self, assignment: str, student: str) -> dict[str, tuple[float | None, float, bool]]:
        """grade_id -> (score, max_score, needs_manual_grade) from the gradebook."""
        from nbgrader.api import Gradebook

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SQLAlchemy's deprecation chatter
            with Gradebook(f"sqlite:///{self.root / 'gradebook.db'}") as gb:
                nb = gb.find_submission_notebook(assignment, assignment, student)
                return {g.name: (g.score, g.max_score, g.needs_manual_grade) for g in nb.grades}


def _graded_course(folder: Path) -> GradedCourse:
    course = GradedCourse(new_course(folder / "layernorm"))
    start = time.perf_counter()
    nbgrader(course.root, "generate_assignment", "*")  # every assignment, one command
    course.seconds["generate"] = time.perf_counter() - start
    for assignment in ASSIGNMENTS:
        submit(course.root, "honest", assignment, read(source_path(assignment)))
        submit(course.root, "blank", assignment, read(release_path(assignment)))
        for mutant in kernel_witnesses():
            if mutant.assignment == assignment:
                nb = released_with(assignment, answers(mutant))
                submit(course.root, mutant_student(mutant), assignment, nb)
    start = time.perf_counter()
    nbgrader(course.root, "autograde", "*")
    course.seconds["autograde"] = time.perf_counter() - start
    return course


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory) -> GradedCourse:
    """Graded once per run, shared by every pytest-xdist worker (run_once.py)."""
    return once(tmp_path_factory, "graded-course", _graded_course)
