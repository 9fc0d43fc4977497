"""Grades out (`python -m normlab.course export`, `make export`): one row per student of the
gradebook, a column per assignment, for an LMS; or in the layout an LMS imports as it is
(`--lms canvas|moodle`, `make export LMS=canvas|moodle`): Canvas's gradebook CSV, Moodle's
grade import.

`nbgrader export` writes one row per student *and* assignment, scores 0.0 for assignments never
released and leaves names empty unless a roster was imported; a gradebook upload wants one row
per student: `student_id, first_name, last_name, email, <assignment>..., total`, a column for
each assignment with a submission, in the course's order. A cell holds the points after the
late penalty (never below 0), blank where nothing was submitted (`--missing zero`: 0);
`--per-check` adds `<assignment>:<grade_id>` columns, to sort the class by misconception. `make
export` never names its file `grades.csv`, which `nbgrader export` writes.

The LMS layouts (`lms_rows`) start from `rows` (a student's points per assignment after the
late penalty) and leave out `total`: each LMS adds up its own, and a column it does not know
becomes a new assignment (Canvas) or a grade item to map (Moodle).

**Canvas** reads back the layout of its own gradebook export (Instructure's guide "How do I
import grades in the Gradebook?",
https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807;
what a real import needs, tried by PrairieLearn's maintainers:
https://github.com/PrairieLearn/PrairieLearn/issues/4547): the columns `Student, ID, SIS User ID,
SIS Login ID, Section` in that order, then one column per assignment, and a second row
`Points Possible` with each assignment's maximum, as Canvas's export writes it. `Student` is
"Last, First"; `SIS Login ID` is nbgrader's student id (the account a student logs in with);
`ID` (Canvas's own number for the user), `SIS User ID` and `Section` are left blank: Canvas
finds the student by login and name, and the Section column must be there but may be empty.

**Moodle** imports a CSV whose first row names the columns; the instructor picks one column to
identify users by ("Map from") and the user field it holds ("Map to": username, email, ID
number), and maps each other column to a grade item (https://docs.moodle.org/en/Grade_import;
the mapping in Moodle's grade/import/csv/classes/load_data.php, `map_user_data_with_value`).
The columns are Moodle's own export's names, `First name, Last name, Username, Email address`,
then one per assignment: map `Username` to username (nbgrader's id) or `Email address` to email.

**A missing submission** is blank by default, which both read as "no grade": Canvas leaves the
cell as it is, Moodle's import sets no grade (`load_data.php`: '' or '-' is null). `--missing
zero` writes 0 instead, for a course where a missing assignment counts as 0 points.
"""

from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from normlab.grading import ASSIGNMENTS

IDENTITY = ("student_id", "first_name", "last_name", "email")


def points(value: float) -> str:
    """A score as an LMS reads it: 12.5, 25 (no float noise)."""
    return f"{round(value, 4):g}"


MISSING = {"blank": "", "zero": "0"}
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_IDENTITY = ("First name", "Last name", "Username", "Email address")


def identity(layout: str, row: dict[str, str]) -> dict[str, str]:
    if layout == "canvas":  # `Student`: "Last, First", or the id when the roster gave no name
        name = ", ".join(part for part in (row["last_name"], row["first_name"]) if part)
        blank = dict.fromkeys(CANVAS_IDENTITY, "")  # ID, SIS User ID and Section stay blank
        return {**blank, "Student": name or row["student_id"], "SIS Login ID": row["student_id"]}
    keys = ("first_name", "last_name", "student_id", "email")  # as MOODLE_IDENTITY names them
    return {name: row[key] for name, key in zip(MOODLE_IDENTITY, keys, strict=True)}


def lms_rows(
    layout: str, assignments: list[str], table: list[dict[str, str]], maxima: dict[str, str]
) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of `layout` from `rows`' table (its `assignments` columns,
    a missing submission already filled as `--missing` says)."""
    names = CANVAS_IDENTITY if layout == "canvas" else MOODLE_IDENTITY
    header = [*names, *assignments]
    out = [{**identity(layout, row), **{a: row[a] for a in assignments}} for row in table]
    if layout == "canvas":  # the second row of Canvas's own export
        out.insert(0, {**dict.fromkeys(names, ""), "Student": "Points Possible", **maxima})
    return header, out


def autograded_cells(gb: Gradebook, assignment: str) -> list[tuple[str, object]]:
    """(notebook name, grade cell) of every autograded test cell of `assignment`, in order."""
    return [
        (notebook.name, cell)
        for notebook in gb.find_assignment(assignment).notebooks
        for cell in notebook.grade_cells
        if cell.cell_type == "code" and cell.name not in {c.name for c in notebook.solution_cells}
    ]


def _found(find, *args):
    """`find(*args)` of the gradebook; None where it holds no such entry."""
    try:
        return find(*args)
    except MissingEntry:
        return None


def rows(db_url: str, per_check: bool = False) -> tuple[list[str], list[dict[str, str]]]:
    """The header and one row per student (sorted by id) of the gradebook at `db_url`."""
    with Gradebook(db_url) as gb:
        # the assignments with at least one submission: the course's order, then by name
        order = {name: i for i, name in enumerate(ASSIGNMENTS)}
        names = [a.name for a in gb.assignments if a.num_submissions > 0]
        assignments = sorted(names, key=lambda name: (order.get(name, len(order)), name))
        checks = {
            a: [(notebook, cell.name) for notebook, cell in autograded_cells(gb, a)]
            for a in (assignments if per_check else ())
        }
        header = [*IDENTITY, *assignments, "total"]
        header += [f"{a}:{gid}" for a in assignments for _, gid in checks.get(a, [])]
        table = []
        for student in sorted(gb.students, key=lambda s: s.id):
            # nbgrader's Student.id, first_name, last_name, email
            row = {key: getattr(student, key.removeprefix("student_")) or "" for key in IDENTITY}
            total = 0.0
            for assignment in assignments:
                sub = _found(gb.find_submission, assignment, student.id)  # None: not submitted
                score = None if sub is None else max(0.0, sub.score - sub.late_submission_penalty)
                row[assignment] = "" if score is None else points(score)
                total += score or 0.0
                for notebook, gid in checks.get(assignment, []):  # a Grade's score is never None
                    grade = sub and _found(gb.find_grade, gid, notebook, assignment, student.id)
                    row[f"{assignment}:{gid}"] = "" if grade is None else points(grade.score)
            row["total"] = points(total)
            table.append(row)
    return header, table


def write_export(
    out: str, per_check: bool = False, lms: str | None = None, missing: str = "blank"
) -> Path:
    """Read the course's gradebook (cwd, its nbgrader_config.py) and write the CSV to `out`:
    this module's columns, or an LMS's (`lms_rows`)."""
    from ..grader.nbgrader_app import load_app, require_gradebook

    app = load_app()
    require_gradebook(app.coursedir.db_url)
    header, table = rows(app.coursedir.db_url, per_check)
    if len(header) == len(IDENTITY) + 1:
        raise SystemExit("no assignment in the gradebook has a submission yet: nothing to export")
    assignments = header[len(IDENTITY) : header.index("total")]
    if lms and per_check:
        raise SystemExit(f"--per-check has no place in {lms}'s layout (each column would become "
                         "an assignment there): export it without --lms")  # fmt: skip
    for row in table:  # a missing submission: blank, or 0 (--missing zero), in every layout
        row.update({a: row[a] or MISSING[missing] for a in assignments})
    if lms:
        with Gradebook(app.coursedir.db_url) as gb:  # each assignment's maximum points
            maxima = {a: points(gb.find_assignment(a).max_score) for a in assignments}
        header, table = lms_rows(lms, assignments, table, maxima)
    return write_csv(Path(out), header, table)


def write_csv(path: Path, header: list[str], table) -> Path:
    """`table`'s rows (dicts) under `header`, as CSV at `path` (its folder made if need be)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        writer.writerows(table)
    return path
