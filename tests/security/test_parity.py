"""The parallel sandboxed grader gives exactly nbgrader's scores, reruns one student, skips
what is graded, and survives a locked SQLite gradebook."""

from __future__ import annotations

import shutil
import sqlite3
import threading

import pytest
from conftest import HONEST, Graded, honest_student, normlab_course, run_grader

from normlab.course.demo import PS2, PS2_ANSWERS, fill, released_notebook, write_submission

pytestmark = pytest.mark.slow


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
