"""A grader killed mid-run leaves nothing half-written: graded again, the class gets the scores
one uninterrupted run gives.

A scheduler ends a job with SIGTERM, then SIGKILL (`scancel`, a time limit); here the whole
grading, its workers and kernels, gets SIGKILL while a kernel runs a submission, the harshest
case (nothing can clean up). Each submission then either has its complete autograded folder and
its final scores, or has no autograded folder, so the next `grade` grades it instead of skipping
it (course/grader/worker.py says how). `tests/e2e/test_slurm.py` does the same through Slurm.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from demo_course import PS2, UID_BASE, build_course, course_env
from security_course import (
    CONFIG_EXTRA,
    HONEST,
    gradebook_scores,
    honest_student,
    run_grader,
    submit_honest,
)

from normlab.course.grader import staging_step

pytestmark = [pytest.mark.slow, pytest.mark.kernels]


def _graded_folders(course: Path) -> set[str]:
    return {p.parent.name for p in (course / "autograded").glob(f"*/{PS2}")}


def _staged_notebooks(course: Path) -> list[Path]:
    return sorted((course / staging_step(PS2)).glob(f"*/{PS2}/*.ipynb"))


def _kill_while_grading(course: Path) -> None:
    """Start the grader (one job), SIGKILL it and its process group once one submission is
    done and the next one's kernel is running."""
    grader = subprocess.Popen(
        [sys.executable, "-m", "normlab.course", "grade", PS2, "--jobs", "1"]
        + ["--no-progress", "--uid-base", str(UID_BASE)],
        cwd=course,
        env=course_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    try:
        while not (_graded_folders(course) and _staged_notebooks(course)):
            assert grader.poll() is None, "the grader ended before it could be killed"
            assert time.monotonic() < deadline, "no submission graded in 300 s"
            time.sleep(0.05)
    finally:
        os.killpg(grader.pid, signal.SIGKILL)
        grader.wait()


def test_a_killed_grading_regraded_gives_one_runs_scores(tmp_path, honest_course):
    course = build_course(tmp_path / "course", config_extra=CONFIG_EXTRA)
    submit_honest(course)
    _kill_while_grading(course)
    done = _graded_folders(course)
    assert 0 < len(done) < len(HONEST)
    scores, expected = (
        gradebook_scores(f"sqlite:///{course / 'gradebook.db'}"),
        honest_course.scores(),
    )
    for student in done:  # a folder only for a submission graded to the end
        assert scores[student] == expected[student], student

    _, output = run_grader(course)
    graded = int(re.search(r"(\d+) graded, 0 failed, (\d+) skipped", output)[1])
    assert graded == len(HONEST) - len(done), output
    assert gradebook_scores(f"sqlite:///{course / 'gradebook.db'}") == expected
    assert _graded_folders(course) == {honest_student(kind) for kind in HONEST}
    assert _staged_notebooks(course) == []
