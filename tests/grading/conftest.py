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

import pytest
from graded_course import GradedCourse, graded_class
from run_once import once


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory) -> GradedCourse:
    """Graded once per run, shared by every pytest-xdist worker (run_once.py)."""
    return once(tmp_path_factory, "graded-course", graded_class)
