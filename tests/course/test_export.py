"""`python -m normlab.course export`: one row per student, a column per submitted assignment.

The gradebook is built with nbgrader's own API (the tables autograde fills): two released
assignments and one never submitted, three students of whom one submitted nothing, a late
penalty on one submission, and a name with a comma (nbgrader's own export does not quote it).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from normlab.course.reports.export import rows

pytestmark = pytest.mark.slow  # nbgrader creates the gradebook (alembic)

STUDENTS = [
    ("alice", "Alice", "Liddell, Jr.", "alice@example.edu"),
    ("bob", "Bob", "Babbage", "bob@example.edu"),
    ("carol", None, None, None),  # added without a roster: no names
]
CELLS = {"ps2_layer_norm": {"axes": 4.0, "eps": 3.0}, "ps3_axes": {"batch_axis": 5.0}}


def build_gradebook(db_url: str) -> None:
    """Scores: alice 7 (ps2, 2 late points off) + 5 (ps3); bob 4 (ps2) and no ps3; carol none."""
    earned = {
        ("alice", "ps2_layer_norm"): {"axes": 4.0, "eps": 3.0},
        ("alice", "ps3_axes"): {"batch_axis": 5.0},
        ("bob", "ps2_layer_norm"): {"axes": 4.0, "eps": 0.0},
    }
    with Gradebook(db_url) as gb:
        for student_id, first, last, email in STUDENTS:
            gb.add_student(student_id, first_name=first, last_name=last, email=email)
        for assignment, cells in CELLS.items():
            gb.add_assignment(assignment)
            gb.add_notebook(assignment, assignment)
            for grade_id, max_score in cells.items():
                gb.add_grade_cell(
                    grade_id, assignment, assignment, max_score=max_score, cell_type="code"
                )
        gb.add_assignment("ps6_stability_speed")  # released, never submitted
        for (student, assignment), scores in earned.items():
            with warnings.catch_warnings():  # nbgrader 0.9 on SQLAlchemy 2 warns (autoflush)
                warnings.simplefilter("ignore", SAWarning)
                gb.add_submission(assignment, student)
            for grade_id, score in scores.items():
                grade = gb.find_grade(grade_id, assignment, assignment, student)
                grade.auto_score = score
        late = gb.find_submission_notebook("ps2_layer_norm", "ps2_layer_norm", "alice")
        late.late_submission_penalty = 2.0
        gb.db.commit()


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course folder with the gradebook; nbgrader runs `alembic` from PATH to create it."""
    folder = tmp_path_factory.mktemp("export")
    (folder / "nbgrader_config.py").write_text("c = get_config()\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        build_gradebook(f"sqlite:///{folder / 'gradebook.db'}")
    return folder


@pytest.fixture(scope="module")
def db_url(course) -> str:
    return f"sqlite:///{course / 'gradebook.db'}"


def test_one_row_per_student_with_late_penalties_and_blanks(db_url):
    header, table = rows(db_url)
    assert header == [
        "student_id",
        "first_name",
        "last_name",
        "email",
        "ps2_layer_norm",
        "ps3_axes",
        "total",
    ]
    by_id = {row["student_id"]: row for row in table}
    assert by_id["alice"] == {
        "student_id": "alice",
        "first_name": "Alice",
        "last_name": "Liddell, Jr.",
        "email": "alice@example.edu",
        "ps2_layer_norm": "5",
        "ps3_axes": "5",
        "total": "10",
    }
    assert (by_id["bob"]["ps2_layer_norm"], by_id["bob"]["ps3_axes"]) == ("4", "")
    assert by_id["bob"]["total"] == "4"
    assert by_id["carol"] == {
        "student_id": "carol",
        "first_name": "",
        "last_name": "",
        "email": "",
        "ps2_layer_norm": "",
        "ps3_axes": "",
        "total": "0",
    }


def test_per_check_columns(db_url):
    header, table = rows(db_url, per_check=True)
    assert header[-3:] == ["ps2_layer_norm:axes", "ps2_layer_norm:eps", "ps3_axes:batch_axis"]
    bob = next(row for row in table if row["student_id"] == "bob")
    assert (bob["ps2_layer_norm:axes"], bob["ps2_layer_norm:eps"]) == ("4", "0")
    assert bob["ps3_axes:batch_axis"] == ""


def test_the_command_writes_a_csv_an_lms_reads(course, tmp_path):
    out = tmp_path / "out" / "grades.csv"
    done = subprocess.run(
        [sys.executable, "-m", "normlab.course", "export", "--out", str(out)],
        cwd=course,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        read = list(csv.DictReader(handle))
    assert [row["student_id"] for row in read] == ["alice", "bob", "carol"]
    assert read[0]["last_name"] == "Liddell, Jr."


def test_no_gradebook_is_named_not_created(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    done = subprocess.run(
        [sys.executable, "-m", "normlab.course", "export", "--out", "g.csv"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "No gradebook at" in done.stderr
    assert not (tmp_path / "gradebook.db").exists()


def export(course, out, *options) -> list[list[str]]:
    """`python -m normlab.course export --out out *options` in `course`; the CSV's rows."""
    done = subprocess.run(
        [sys.executable, "-m", "normlab.course", "export", "--out", str(out), *options],
        cwd=course, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_canvas_reads_its_own_export_layout(course, tmp_path):
    """Student, ID, SIS User ID, SIS Login ID, Section in that order, a Points Possible row, the
    assignments, no total (export.py cites Canvas's guide); a missing submission is blank."""
    header, maxima, *students = export(course, tmp_path / "c.csv", "--lms", "canvas")
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                      "ps2_layer_norm", "ps3_axes"]  # fmt: skip
    assert maxima == ["Points Possible", "", "", "", "", "7", "5"]
    assert students == [
        ["Liddell, Jr., Alice", "", "", "alice", "", "5", "5"],
        ["Babbage, Bob", "", "", "bob", "", "4", ""],
        ["carol", "", "", "carol", "", "", ""],
    ]


def test_moodle_maps_a_username_column(course, tmp_path):
    """Moodle's export's column names, a Username to map users by, no total; 0 when asked."""
    header, *students = export(course, tmp_path / "m.csv", "--lms", "moodle", "--missing", "zero")
    assert header == ["First name", "Last name", "Username", "Email address",
                      "ps2_layer_norm", "ps3_axes"]  # fmt: skip
    assert students[1] == ["Bob", "Babbage", "bob", "bob@example.edu", "4", "0"]
    assert students[2] == ["", "", "carol", "", "0", "0"]


def test_zero_for_missing_in_the_per_student_file(course, tmp_path):
    header, *students = export(course, tmp_path / "z.csv", "--missing", "zero")
    bob = dict(zip(header, students[1], strict=True))
    assert (bob["ps3_axes"], bob["total"]) == ("0", "4")


def test_per_check_columns_are_refused_in_an_lms_layout(course, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "normlab.course", "export", "--out", str(tmp_path / "x.csv"),
         "--lms", "canvas", "--per-check"],
        cwd=course, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode != 0 and "--per-check has no place in canvas" in done.stderr
    assert not (tmp_path / "x.csv").exists()
