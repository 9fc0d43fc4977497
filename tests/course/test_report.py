"""The class report: real counts from a graded class, and the demo numbers the book shows."""

from __future__ import annotations

import csv

import pytest
from demo_course import PS2, REPO, build_course, demo_class
from security_course import normlab_course

pytestmark = pytest.mark.slow
COMMITTED = REPO / "instructors" / "class_report_demo.csv"
REGENERATE = (
    "python tests/demo_course.py /tmp/demo-class && cd /tmp/demo-class && "
    f"python -m normlab.course grade {PS2} && python -m normlab.course report {PS2} && "
    f"cp reports/{PS2}/class_report.csv {COMMITTED}"
)


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    course = build_course(tmp_path_factory.mktemp("demo") / "course")
    roster = demo_class(course)
    for command in (("grade", PS2, "--jobs", "2", "--no-progress"), ("report", PS2)):
        done = normlab_course(course, *command)
        assert done.returncode == 0, done.stdout + done.stderr
    return course / "reports" / PS2, roster


def test_report_writes_the_csv_and_the_chart(demo_report):
    folder, _ = demo_report
    assert (folder / "misconceptions.png").stat().st_size > 10_000
    with open(folder / "class_report.csv", newline="") as handle:
        rows = {row["grade_id"]: row for row in csv.DictReader(handle)}
    assert all(int(row["students"]) == 12 for row in rows.values())
    # one blank submission: every cell counts it as not written, never as a misconception
    assert all(int(row["not_written"]) == 1 for row in rows.values())
    # the sample-variance student is counted under the population-variance cells
    assert int(rows["population_variance"]["misconception_count"]) >= 1
    assert int(rows["stats_population_variance"]["misconception_count"]) >= 1


def test_the_books_demo_numbers_are_a_real_report(demo_report):
    folder, _ = demo_report
    fresh = (folder / "class_report.csv").read_text()
    assert COMMITTED.read_text() == fresh, (
        f"the demo class report changed; regenerate:\n{REGENERATE}"
    )
