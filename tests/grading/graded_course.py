"""The class that test_nbgrader.py and the tests beside it share (conftest.py's `graded_course`).

A module of its own, not in conftest.py: run_once.py pickles `GradedCourse`, and pickle finds a
class by its module's name, which tests/grading's and tests/course's conftest.py share when one
run collects both.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from course_helpers import (
    nbgrader,
    new_course,
    read,
    release_path,
    source_path,
    submit,
)
from mutants import answers, kernel_witnesses, mutant_student, released_with

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


def graded_class(folder: Path) -> GradedCourse:
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
