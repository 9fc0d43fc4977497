"""The class report: counts by each cell's verdict category, real counts from a graded class,
and the demo numbers the book shows."""

from __future__ import annotations

import csv
import json

import pytest
from demo_course import PS2, REPO, build_course, demo_class
from security_course import normlab_course

from normlab.course.grader.notebook import cell_category
from normlab.course.grader.outputs import error
from normlab.course.reports.class_report import Row, column
from normlab.grading import CHECKS, cell_verdict
from normlab.grading.verdict import CRASHED, NOT_WRITTEN, PASSED, TIMED_OUT

COMMITTED = REPO / "instructors" / "class_report_demo.csv"
REGENERATE = (
    "python tests/demo_course.py /tmp/demo-class && cd /tmp/demo-class && "
    f"python -m normlab.course grade {PS2} && python -m normlab.course report {PS2} && "
    f"cp reports/{PS2}/class_report.csv {COMMITTED}"
)


def _row_stats_raises(x):
    raise ValueError("operands could not be broadcast together")


def _row_stats_sample(x):
    return x.mean(axis=-1), x.var(axis=-1, ddof=1)


def _row_stats_blank(x):
    raise NotImplementedError


# a class of four, by what each submitted as row_stats
CLASS = {
    "blank": {"row_stats": _row_stats_blank},
    "crash": {"row_stats": _row_stats_raises},
    "sample": {"row_stats": _row_stats_sample},
    "right": {"row_stats": lambda x: (x.mean(axis=-1), x.var(axis=-1))},
}


def _entry(verdict) -> dict:
    """The grading record's entry of a test cell (see normlab.course.grader.notebook)."""
    return {"category": verdict.category, "message": verdict.message}


CELLS = CHECKS[PS2].cell
STATS_CELLS = (CELLS.stats_axis.grade_id, CELLS.stats_population_variance.grade_id)


def _entries() -> dict[str, dict[str, dict]]:
    """student -> grade_id -> the grading record's entry of that test cell (as the grader
    writes it, see normlab.course.grader.notebook), from the cell's real verdict."""
    entries = {}
    for student, namespace in CLASS.items():
        verdicts = {gid: cell_verdict(PS2, gid, namespace) for gid in STATS_CELLS}
        entries[student] = {
            gid: {"category": v.category, "message": v.message} for gid, v in verdicts.items()
        }
    return entries


def _tally(entries: dict[str, dict[str, dict]]) -> list[Row]:
    rows = []
    for grade_id in STATS_CELLS:
        row = Row(grade_id, CHECKS[PS2][grade_id].misconception, 2.0)
        for cells in entries.values():
            row.add(cells[grade_id]["category"] != PASSED, cells[grade_id])
        rows.append(row)
    return rows


def test_each_lost_cell_is_counted_by_its_verdicts_category():
    """A crash and a blank are not misconceptions: each counts once, in its own column."""
    axis, variance = _tally(_entries())
    assert (axis.students, axis.misconception_count, axis.not_written, axis.crashed) == (4, 0, 1, 1)
    assert (variance.misconception_count, variance.not_written, variance.crashed) == (1, 1, 1)
    assert variance.misconception == "row_stats: the sample variance (d - 1)"


def test_rewording_a_message_changes_no_count():
    entries = _entries()
    reworded = {
        student: {
            gid: {**entry, "message": entry["message"] and f"reworded: {entry['message'][::-1]}"}
            for gid, entry in cells.items()
        }
        for student, cells in entries.items()
    }
    assert reworded != entries
    assert _tally(reworded) == _tally(entries)
    # a misconception whose words look like "not written" is still a misconception
    lookalike = {
        "category": CELLS.stats_axis.category,
        "message": "row_stats is not written yet: NameError",
    }
    assert column(lookalike) == "misconception_count"


@pytest.mark.parametrize(
    ("entry", "counted"),
    [
        ({"category": NOT_WRITTEN}, "not_written"),
        ({"category": CRASHED}, "crashed"),
        ({"category": TIMED_OUT}, "timed_out"),
        ({"category": CELLS.population_variance.category}, "misconception_count"),
        ({"category": "sample_variance"}, "misconception_count"),  # a finer one
        ({"category": PASSED}, "no_verdict"),  # the score was changed by hand
        ({"status": "failed", "message": "AssertionError: ..."}, "no_verdict"),  # an old record
        (None, "no_verdict"),  # graded without the grader
    ],
)
def test_the_column_of_a_lost_cell(entry, counted):
    assert column(entry) == counted


@pytest.mark.parametrize(
    ("failed", "errors", "verdict", "category"),
    [
        (False, [], PASSED, PASSED),
        (True, [error("AssertionError", "Wrong axis: ...")], "wrong_axis", "wrong_axis"),
        (True, [error("NameError", "name 'f' is not defined")], NOT_WRITTEN, NOT_WRITTEN),
        (True, [], PASSED, CRASHED),  # the check passed, the cell wrote to stderr
        # cells the kernel ran (not check calls): by what they raised
        (True, [error("AssertionError", "wrong")], None, CELLS.stats_axis.grade_id),
        (True, [error("NotImplementedError", "")], None, NOT_WRITTEN),
        (True, [error("ZeroDivisionError", "division by zero")], None, CRASHED),
    ],
)
def test_a_test_cell_that_ran_gets_its_category(failed, errors, verdict, category):
    assert cell_category(CELLS.stats_axis.grade_id, failed, errors, verdict) == category


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    course = build_course(tmp_path_factory.mktemp("demo") / "course")
    roster = demo_class(course)
    for command in (("grade", PS2, "--jobs", "2", "--no-progress"), ("report", PS2)):
        done = normlab_course(course, *command)
        assert done.returncode == 0, done.stdout + done.stderr
    return course / "reports" / PS2, roster


@pytest.mark.slow
@pytest.mark.kernels
def test_report_writes_the_csv_and_the_chart(demo_report):
    folder, _ = demo_report
    assert (folder / "misconceptions.png").stat().st_size > 10_000
    with open(folder / "class_report.csv", newline="") as handle:
        rows = {row["grade_id"]: row for row in csv.DictReader(handle)}
    assert all(int(row["students"]) == 12 for row in rows.values())
    # one blank submission: every cell counts it as not written, never as a misconception
    assert all(int(row["not_written"]) == 1 for row in rows.values())
    assert all(int(row[c]) == 0 for row in rows.values() for c in ("timed_out", "no_verdict"))
    # the sample-variance student is counted under the population-variance cells
    for spec in (CELLS.population_variance, CELLS.stats_population_variance):
        assert int(rows[spec.grade_id]["misconception_count"]) >= 1
    # bars are labelled with the misconception, not with what the check wants
    assert rows[CELLS.centering.grade_id]["misconception"] == CELLS.centering.misconception


@pytest.mark.slow
@pytest.mark.kernels
def test_every_test_cell_of_the_records_has_a_category(demo_report):
    folder, _ = demo_report
    for path in sorted((folder / "records").rglob("*.json")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["grade_id"]:
                assert cell["category"] and cell["status"], (path, cell)
                assert (cell["category"] == PASSED) == (cell["status"] == "passed"), cell


@pytest.mark.slow
@pytest.mark.kernels
def test_the_books_demo_numbers_are_a_real_report(demo_report):
    folder, _ = demo_report
    fresh = (folder / "class_report.csv").read_text()
    assert COMMITTED.read_text() == fresh, (
        f"the demo class report changed; regenerate:\n{REGENERATE}"
    )
