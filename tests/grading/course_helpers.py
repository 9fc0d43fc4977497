"""Helpers for the course tests: notebooks, planted bugs, temporary nbgrader courses."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from notebook_secrets import secret_lines_of

from normlab.course.download.recording import (  # noqa: F401 (re-exported)
    SUMMARY_CELL,
    answer_cells,
    as_student,
)
from normlab.grading import pools
from normlab.grading.checkcell import is_check_cell

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "solutions"
EXERCISES = REPO / "exercises"
VENV_BIN = Path(sys.executable).parent
# the student an in-process run of ps1 is (its STUDENT line): grace's variant has d = 6 and a
# standard deviation of 3, so her normalized values are thirds, and a rounded answer shows
TEST_STUDENT = "grace"


def variant_for(assignment: str, student: str = TEST_STUDENT) -> dict | None:
    """`student`'s variant of an assignment with a pool (ps1), else None."""
    return pools.variant(assignment, student) if assignment in pools.POOLS else None


def own_variant(spec) -> dict:
    """make_cases' keyword for `spec`: the test student's variant where the check varies."""
    return {"variant": variant_for(spec.assignment)} if spec.varies else {}


def source_path(assignment: str) -> Path:
    return SOLUTIONS / assignment / f"{assignment}.ipynb"


def release_path(assignment: str) -> Path:
    return EXERCISES / assignment / f"{assignment}.ipynb"


def read(path: Path):
    return nbformat.read(path, as_version=4)


def secret_region_lines(assignment: str, min_length: int) -> set[str]:
    """The source notebook's lines (stripped, of min_length characters or more) inside its
    BEGIN/END SOLUTION and BEGIN/END HIDDEN TESTS regions."""
    return secret_lines_of(source_path(assignment), min_length)


def nbgrader_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def grade_cells(nb) -> dict[str, float]:
    """grade_id -> points of every grade cell (autograded and manual)."""
    return {
        nbgrader_meta(c)["grade_id"]: float(nbgrader_meta(c)["points"])
        for c in nb.cells
        if nbgrader_meta(c).get("grade")
    }


def autograded_cells(nb) -> dict[str, float]:
    """grade_id -> points of every autograded test cell."""
    return {
        nbgrader_meta(c)["grade_id"]: float(nbgrader_meta(c)["points"])
        for c in nb.cells
        if is_check_cell(c)
    }


def with_bug(nb, edits):
    """A copy of the source notebook with the bank's edits applied to its answer cells."""
    nb = nbformat.from_dict(nb)  # deep copy
    cells = {nbgrader_meta(c).get("grade_id"): c for c in nb.cells}
    for grade_id, old, new in edits:
        cell = cells[grade_id]
        if old == "^":
            cell.source = new + cell.source
        else:
            assert old in cell.source, f"{grade_id} has no {old!r}: the bank is out of date"
            cell.source = cell.source.replace(old, new)
    return nb


def with_student(nb, student: str = TEST_STUDENT):
    """The notebook with its STUDENT line (ps1's first code cell) naming `student`."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = as_student(cell.source, student)
    return nb


def run_in_process(nb, student: str = TEST_STUDENT) -> dict:
    """Execute the notebook's code cells in order in this process (not its test cells, nor
    the summary cell, which re-runs the visible checks: `answer_cells`), as `student` (ps1's
    STUDENT line).

    Errors in answer and try-it cells are kept quiet, as a kernel would keep going.
    """
    return run_sources(answer_cells(nb), student)


def run_sources(sources: list[str], student: str = TEST_STUDENT) -> dict:
    """A namespace made by running each source in order (ps1's STUDENT line naming
    `student`), errors kept quiet."""
    namespace: dict = {}
    for source in sources:
        try:
            code = compile(as_student(source, student), "<cell>", "exec")
            exec(code, namespace)  # noqa: S102 - a notebook cell
        except Exception:  # noqa: BLE001 - a planted bug or an unfilled stub: the checks say so
            pass
    return namespace


def summary_counts(text: str) -> tuple[int, int, float, float]:
    """(checks passing, checks, points they cover, points checked) from a summary's output."""
    found = re.search(
        r"(\d+) of (\d+) visible checks pass, covering ([\d.]+) of the ([\d.]+) points", text
    )
    assert found, text
    passed, total, earned, points = found.groups()
    return int(passed), int(total), float(earned), float(points)


def points_lost(text: str) -> float:
    """The points a summary's output says the failing visible checks lose."""
    if "; none fails." in text:
        return 0.0
    found = re.search(r"the (one|\d+) that fails? loses? ([\d.]+) points?\.", text)
    assert found, text
    return float(found.group(2))


def nbgrader_env() -> dict:
    """The environment for nbgrader commands: this venv first on PATH (nbgrader runs alembic)."""
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("NBGRADER_EXCHANGE", None)
    return env


def nbgrader(course: Path, *args: str, env: dict | None = None, check: bool = True):
    """Run `nbgrader ARGS` in `course`; fail with its output when it fails."""
    done = subprocess.run(
        [str(VENV_BIN / "nbgrader"), *args],
        cwd=course,
        env=env or nbgrader_env(),
        capture_output=True,
        text=True,
        # a whole class of one assignment in one call: ps8's 26 notebooks each train two
        # networks; on a loaded 2-core machine that passed 900 s
        timeout=1800,
        check=False,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def new_course(root: Path) -> Path:
    """A temporary course: the repo's nbgrader_config.py and solutions/, nothing else."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(SOLUTIONS, root / "solutions")
    return root


def submit(course: Path, student: str, assignment: str, nb) -> None:
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{assignment}.ipynb")


def cells_lost(cells) -> frozenset[str]:
    """The grade_ids of the cells a submission loses when it holds the misconceptions of the
    checks `cells`: under the course's reuse policy (the default, "function"), a reuse cell
    costs every cell of its function (`normlab.grading.session.Session.judge`)."""
    from normlab.grading.catalog import cells_of

    lost = set(cells)
    for spec in cells:
        if spec.voids:
            lost |= set(cells_of(spec))
    return frozenset(spec.grade_id for spec in lost)
