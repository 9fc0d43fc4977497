"""Plain `nbgrader autograde` warns about a locked cell only when a student changed it.

nbgrader itself warns "checksum has changed" for every test cell whose hidden tests it puts
back (nbgrader #1961); the course's `RestoreHiddenTests` (nbgrader_config.py) restores those
quietly. A cell the student really edited is still reported, and graded as released.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cells import PS2 as PS2_CELLS
from demo_course import (
    PS2,
    PS2_ANSWERS,
    build_course,
    course_env,
    fill,
    nbgrader_command,
    released_notebook,
    write_submission,
)

pytestmark = pytest.mark.slow
CHANGED = "Attribute 'checksum' for cell"


@pytest.fixture(scope="module")
def autograde_log(tmp_path_factory) -> tuple[Path, str]:
    course = build_course(tmp_path_factory.mktemp("checksums") / "course")
    honest = fill(released_notebook(course), PS2_ANSWERS["correct"])
    write_submission(course, "honest", honest)
    edited = fill(released_notebook(course), PS2_ANSWERS["correct"])
    for cell in edited.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == PS2_CELLS.axis.grade_id:
            cell.source = "pass  # the student emptied this test cell"
    write_submission(course, "edited", edited)
    done = subprocess.run(
        [*nbgrader_command(), "autograde", PS2],
        cwd=course,
        env=course_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return course, done.stdout + done.stderr


def test_an_honest_notebook_raises_no_checksum_warning(autograde_log):
    _, log = autograde_log
    honest_part = log.split("for honest")[1].split("SubmittedAssignment")[0]
    assert CHANGED not in honest_part


def test_an_edited_test_cell_is_reported_and_restored(autograde_log):
    course, log = autograde_log
    warnings = [line for line in log.splitlines() if CHANGED in line]
    assert len(warnings) == 1 and "cell axis " in warnings[0]
    graded = (course / "autograded" / "edited" / PS2 / f"{PS2}.ipynb").read_text()
    assert "the student emptied this test cell" not in graded
    assert "BEGIN HIDDEN TESTS" in graded  # the hidden tests went back in
