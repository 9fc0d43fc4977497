"""The class report: how many students fell into each misconception, from the gradebook.

    python -m normlab.course report ps2_layer_norm      # -> reports/ps2_layer_norm/

One grade cell per misconception makes this a count. For every autograded test cell it reads
each student's score from nbgrader's gradebook and sorts those who lost its points by the
category of the cell's verdict, which the grader recorded (`records`, `normlab.grading.verdict`),
never by the words of the message (`COLUMNS`; `no_verdict`: nothing recorded explains the loss,
as after plain nbgrader or a score changed by hand). It writes `class_report.csv` (a row per
test cell) and `misconceptions.png`, a bar chart of the misconception counts; for an assignment
with a pool (ps1), also `copied_variants.csv` (`copied`), for the instructor to judge.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from matplotlib.ticker import MaxNLocator
from nbgrader.api import Gradebook

from normlab import figures
from normlab.grading import CHECKS, pools
from normlab.grading.verdict import CRASHED, NOT_JUDGED, NOT_WRITTEN, PASSED, TIMED_OUT

from ..grader import assignment_folder, student_records
from ..grader.nbgrader_app import load_app, require_assignment
from .export import autograded_cells, write_csv

# the column that counts a lost cell, by its verdict's category (else: a misconception)
COLUMNS = {c: c.replace(" ", "_") for c in (NOT_WRITTEN, CRASHED, TIMED_OUT, NOT_JUDGED)}


@dataclass
class Row:
    """One autograded test cell of the class."""

    grade_id: str
    misconception: str
    points: float
    students: int = 0
    misconception_count: int = 0
    not_written: int = 0
    crashed: int = 0
    timed_out: int = 0
    not_judged: int = 0
    no_verdict: int = 0

    def add(self, lost: bool, entry: dict | None) -> None:
        """Count one student's grade of this cell; one who `lost` its points is counted by
        the verdict the grader recorded for the cell (`entry`), in its category's column."""
        self.students += 1
        if lost:
            field = column(entry)
            setattr(self, field, getattr(self, field) + 1)


def column(entry: dict | None) -> str:
    """The column that counts a lost cell whose grading record is `entry` (by its category)."""
    category = (entry or {}).get("category")
    if category in (None, PASSED):
        return "no_verdict"
    return COLUMNS.get(category, "misconception_count")


def class_rows(db_url: str, root: str, assignment: str) -> list[Row]:
    """The report's rows, in notebook order."""
    words = {gid: spec.misconception for gid, spec in CHECKS.get(assignment, {}).items()}
    rows: dict[str, Row] = {}
    with Gradebook(db_url) as gb:
        for _, cell in autograded_cells(gb, assignment):
            rows[cell.name] = Row(cell.name, words.get(cell.name, ""), cell.max_score)
        for submission in gb.assignment_submissions(assignment):
            # {grade_id: the grading record's entry}, from the student's notebooks' records
            paths = sorted(student_records(root, assignment, submission.student_id).glob("*.json"))
            found = [json.loads(path.read_text()).get("cells", []) for path in paths]
            records = {c["grade_id"]: c for cells in found for c in cells if c.get("grade_id")}
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.name in rows:
                        lost = (grade.score or 0.0) < grade.max_score
                        rows[grade.name].add(lost, records.get(grade.name))
    return list(rows.values())


def draw(rows: list[Row], title: str):
    """Horizontal bars: students per misconception (one bar per test cell)."""
    fig, ax = figures.new(width=7.0, height=0.32 * len(rows) + 1.2)
    labels = [r.misconception or r.grade_id for r in rows]
    counts = [r.misconception_count for r in rows]
    positions = range(len(rows))[::-1]
    ax.barh(list(positions), counts, color=figures.color("red_team"), height=0.6)
    ax.set_yticks(list(positions), labels)
    ax.set_xlabel(f"students with the misconception (of {max(r.students for r in rows)})")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title)
    ax.grid(axis="y", visible=False)
    for y, count in zip(positions, counts, strict=True):
        ax.text(count, y, f" {count}", va="center", fontsize=8)
    return fig


def write_report(assignment: str, output: str | None = None) -> list[Path]:
    """Read the course's gradebook (cwd) and write the CSV and the chart; return their paths."""
    coursedir = load_app().coursedir
    require_assignment(coursedir.db_url, assignment)
    rows = class_rows(coursedir.db_url, coursedir.root, assignment)
    if not rows or not any(r.students for r in rows):
        raise SystemExit(f"no graded submissions of {assignment} in the gradebook")
    folder = Path(output) if output else assignment_folder(coursedir.root, assignment)
    header = [f.name for f in fields(Row)]
    written = [write_csv(folder / "class_report.csv", header, map(asdict, rows))]
    fig = draw(rows, f"{assignment}: misconceptions in the class")
    written.append(figures.save(fig, folder / "misconceptions.png"))
    if assignment in pools.POOLS:
        written.append(write_copied(coursedir, assignment, folder / "copied_variants.csv"))
    return written


def write_copied(coursedir, assignment: str, path: Path) -> Path:
    """The copied-variant flags of the class (`copied`), as CSV; each also printed."""
    from .copied import flags

    with Gradebook(coursedir.db_url) as gb:
        students = [s.student_id for s in gb.assignment_submissions(assignment)]
    folder = coursedir.submitted_directory
    submitted = {
        s: sorted(Path(coursedir.format_path(folder, s, assignment)).glob("*.ipynb"))
        for s in students
    }
    found = flags(assignment, submitted)
    for flag in found:
        print(
            f"{assignment}: {flag.student}'s answers in {', '.join(flag.cells)} are exactly "
            f"{flag.variant_of}'s variant's (copied? no penalty beyond the grade: yours to judge)"
        )
    table = [{**asdict(flag), "cells": " ".join(flag.cells)} for flag in found]
    return write_csv(path, ["student", "variant_of", "cells"], table)
