"""The grader: nbgrader's autograde, with each submission run in a sandbox kernel of its own.

    run             `grade`: workers, progress, shards (`--shard K/N`), the run's record
    worker          nbgrader's own Autograde converter, in-process, one submission at a time
    nbgrader_app    nbgrader's configuration, loaded as `nbgrader autograde` loads it
    nbgrader_costs  nbgrader's engine and checked schema, kept for a worker's submissions
    execute         `SandboxExecute`, the nbgrader step that replaces `Execute`
    notebook        one notebook's cells: check cells judged here, the rest in the kernel
    outputs         the cell outputs the grader writes, and which of them score 0
    answers         the grader's answers to the kernel's questions (and its notes of reuse)
    kernel_session  a notebook's kernel across replacements
    kernel_process  one kernel process, its timeouts and deaths
    isolation, bwrap  how tightly kernels are locked in; the bubblewrap sandbox
    userns          the host settings that forbid a normal user's bwrap, and their fixes

The other side, what runs in the kernel, is `normlab_sandbox`; the protocol between them is
`normlab_sandbox.protocol`. What the grader defends against: instructors/threat_model.md.

Below: where the grader keeps its records, under the course root, for instructors only.

    reports/<assignment>/grading-run.json                      each student's last run (run)
    reports/<assignment>/records/<student>/<notebook>.json     each test cell's status (execute)
    reports/<assignment>/class_report.csv, misconceptions.png  the class report (reports)
    reports/<assignment>/autograding/<student>/<assignment>/   a submission being graded (worker)

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


def staging_step(assignment: str) -> str:
    """The folder, relative to the course root, where the worker has nbgrader write a
    submission's autograded copy before moving it, complete, into `autograded/`."""
    return f"{REPORTS}/{assignment}/autograding"


def forget_student(root, assignment: str, student: str) -> None:
    """Remove a student's notebook records (before a regrade, or when grading failed)."""
    shutil.rmtree(student_records(root, assignment, student), ignore_errors=True)
