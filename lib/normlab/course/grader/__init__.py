"""The grader: nbgrader's autograde, with each submission run in a sandbox kernel of its own
(its modules, in order: ARCHITECTURE.md, "From a student's notebook to a grade"; the kernel's
side is `normlab_sandbox`, their protocol `normlab_sandbox.protocol`).

Where the grader keeps its records, under the course root, for instructors only:

    reports/<assignment>/grading-run.json                      each student's last run (class_run)
    reports/<assignment>/records/<student>/<notebook>.json     each test cell's status (execute)
    reports/<assignment>/class_report.csv, misconceptions.png  the class report (reports)
    reports/<assignment>/autograding/<student>/<assignment>/   a submission being graded (worker)

They live outside `autograded/`, whose other files nbgrader copies into the feedback it
releases to students. `reports/` is git-ignored.
"""

from __future__ import annotations

import resource
import shutil
from pathlib import Path

REPORTS = "reports"


def assignment_folder(root, assignment: str) -> Path:
    return Path(root) / REPORTS / assignment


def run_record(root, assignment: str) -> Path:
    return assignment_folder(root, assignment) / "grading-run.json"


def student_records(root, assignment: str, student: str) -> Path:
    return assignment_folder(root, assignment) / "records" / student


def notebook_record(root, assignment: str, student: str, notebook: str) -> Path:
    return student_records(root, assignment, student) / f"{notebook}.json"


def staging_step(assignment: str) -> str:
    """Where, under the course root, nbgrader writes an autograded copy (see `worker`)."""
    return f"{REPORTS}/{assignment}/autograding"


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    """User and system CPU seconds of this process (or RUSAGE_CHILDREN: its waited-for ones)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def forget_student(root, assignment: str, student: str) -> None:
    """Remove a student's notebook records (before a regrade, or when grading failed)."""
    shutil.rmtree(student_records(root, assignment, student), ignore_errors=True)
