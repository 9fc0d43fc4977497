"""Where the grader keeps its records: under the course root, for instructors only.

    reports/<assignment>/grading-run.json                      each student's last run (runner)
    reports/<assignment>/records/<student>/<notebook>.json     each test cell's status (execute)
    reports/<assignment>/class_report.csv, misconceptions.png  the class report (report)

They live outside `autograded/`, whose other files nbgrader copies into the feedback it
releases to students. `reports/` is git-ignored.
"""

from __future__ import annotations

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


def forget_student(root, assignment: str, student: str) -> None:
    """Remove a student's notebook records (before a regrade, or when grading failed)."""
    shutil.rmtree(student_records(root, assignment, student), ignore_errors=True)
