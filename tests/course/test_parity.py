"""The parallel sandboxed grader gives exactly nbgrader's scores (every assignment's class:
tests/grading/test_sandbox_class.py), reruns one student, skips what is graded, and survives
a locked SQLite gradebook."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import threading

import pytest
from demo_course import (
    PS2,
    PS2_ANSWERS,
    course_env,
    fill,
    nbgrader_command,
    released_notebook,
    write_submission,
)
from security_course import HONEST, Graded, honest_student, normlab_course, run_grader

from normlab.course.grader import run_record

pytestmark = [pytest.mark.slow, pytest.mark.kernels]


def test_parallel_scores_equal_serial_nbgrader(honest_course, serial_honest_course):
    parallel, serial = honest_course.scores(), serial_honest_course.scores()
    assert set(parallel) == {honest_student(k) for k in HONEST}
    assert parallel == serial


def test_the_class_spans_full_marks_partial_and_zero(honest_course):
    totals = {honest_course.total(honest_student(k)) for k in HONEST}
    assert 25.0 in totals and 0.0 in totals and len(totals) >= 4


@pytest.fixture
def course_copy(honest_course, tmp_path) -> Graded:
    return Graded(shutil.copytree(honest_course.root, tmp_path / "course"), 0.0, "")


def test_rerun_regrades_one_student_and_no_other(course_copy):
    before = course_copy.export_rows()
    late = honest_student("unfilled")
    nb = fill(released_notebook(course_copy.root), PS2_ANSWERS["correct"])
    write_submission(course_copy.root, late, nb)
    done = normlab_course(course_copy.root, "rerun", PS2, late, "--jobs", "1", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    after = course_copy.export_rows()
    assert course_copy.total(late) == 25.0 and after[late] != before[late]
    del before[late], after[late]
    assert after == before


def test_grade_skips_what_is_graded_unless_forced(course_copy):
    done = normlab_course(course_copy.root, "grade", PS2, "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"0 graded, 0 failed, {len(HONEST)} skipped" in done.stdout


def test_grading_survives_a_locked_gradebook(course_copy):
    before = course_copy.scores()
    holder = sqlite3.connect(course_copy.root / "gradebook.db", check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(4.0, holder.rollback)
    release.start()
    try:
        run_grader(course_copy.root, "--force")
    finally:
        release.join()
        holder.close()
    assert course_copy.scores() == before


def test_feedback_shows_the_judges_message_and_no_grader_records(course_copy):
    done = subprocess.run(
        [*nbgrader_command(), "generate_feedback", PS2],
        cwd=course_copy.root,
        env=course_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    folder = course_copy.root / "feedback" / honest_student("sample_variance") / PS2
    page = (folder / f"{PS2}.html").read_text()
    assert "sample variance" in page or "n - 1" in page
    assert not list((course_copy.root / "feedback").rglob("*.json"))


def test_basic_isolation_gives_the_same_scores_and_says_so_first(course_copy, honest_course):
    """What a grader without bubblewrap gets when it asks: the verdict still outside the
    kernel, the same scores."""
    done = normlab_course(
        course_copy.root, "grade", PS2, "--force", "--isolation", "basic", "--no-progress"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "with basic isolation, as asked" in done.stdout.splitlines()[0]
    assert json.loads(run_record(course_copy.root, PS2).read_text())["isolation"] == "basic"
    assert course_copy.scores() == honest_course.scores()


NO_USER_NAMESPACES = """#!/bin/sh
echo "bwrap: No permissions to create a new namespace, likely because the kernel does not \
allow non-privileged user namespaces." >&2
exit 1
"""


@pytest.mark.parametrize("mode", ["auto", "strict"])
def test_where_bwrap_cannot_sandbox_grading_is_refused_in_one_line(course_copy, tmp_path, mode):
    """A system without unprivileged user namespaces (here: a bwrap that fails as it would):
    nothing is graded, and one line says why and what to do."""
    (tmp_path / "bwrap").write_text(NO_USER_NAMESPACES)
    (tmp_path / "bwrap").chmod(0o755)
    gradebook = course_copy.root / "gradebook.db"
    before = gradebook.read_bytes()
    grade = ("grade", PS2, "--force", "--no-progress", "--isolation", mode)
    done = normlab_course(course_copy.root, *grade, path_first=tmp_path)
    assert done.returncode != 0 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert "refusing to run students' code without strict isolation" in line
    assert "non-privileged user namespaces" in line and "--isolation basic" in line
    assert gradebook.read_bytes() == before  # not a byte of the gradebook written


def test_grading_outside_a_course_says_so_and_creates_nothing(tmp_path):
    done = normlab_course(tmp_path, "grade", PS2, "--no-progress")
    assert done.returncode != 0 and "No gradebook" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_unreadable_notebook_is_recorded_with_zeros_and_kept(course_copy):
    before = course_copy.export_rows()
    broken = honest_student("correct")
    path = course_copy.root / "submitted" / broken / PS2 / f"{PS2}.ipynb"
    path.write_text('{"cells": [ this is not JSON')
    done = normlab_course(course_copy.root, "rerun", PS2, broken, "--jobs", "1", "--no-progress")
    assert done.returncode == 1 and f"failed: {broken}" in done.stderr
    assert path.read_text() == '{"cells": [ this is not JSON'  # what the student sent, kept
    record = json.loads(run_record(course_copy.root, PS2).read_text())
    entry = next(s for s in record["students"] if s["student"] == broken)
    assert entry["status"] == "failed" and "JSON" in entry["reason"]
    assert set(course_copy.scores()[broken].values()) == {0.0}
    after = course_copy.export_rows()
    del before[broken], after[broken]
    assert after == before
