"""Grades in the layout an LMS imports as it is: Canvas's gradebook CSV, Moodle's grade import
(`python -m normlab.course export --lms canvas|moodle`, `make export LMS=canvas|moodle`).

Both start from `export.rows` (a student's points per assignment after the late penalty) and
leave out `total`: each LMS adds up its own, and a column it does not know becomes a new
assignment (Canvas) or a grade item to map (Moodle).

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

from nbgrader.api import Gradebook


def points(value: float) -> str:
    """A score as an LMS reads it: 12.5, 25 (no float noise)."""
    return f"{round(value, 4):g}"


MISSING = {"blank": "", "zero": "0"}
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_IDENTITY = ("First name", "Last name", "Username", "Email address")


def possible(db_url: str, assignments: list[str]) -> dict[str, str]:
    """{assignment: its maximum points}, as the gradebook has them."""
    with Gradebook(db_url) as gb:
        return {name: points(gb.find_assignment(name).max_score) for name in assignments}


def identity(layout: str, row: dict[str, str]) -> dict[str, str]:
    if layout == "canvas":  # `Student`: "Last, First", or the id when the roster gave no name
        name = ", ".join(part for part in (row["last_name"], row["first_name"]) if part)
        blank = dict.fromkeys(CANVAS_IDENTITY, "")  # ID, SIS User ID and Section stay blank
        return {**blank, "Student": name or row["student_id"], "SIS Login ID": row["student_id"]}
    return {
        "First name": row["first_name"],
        "Last name": row["last_name"],
        "Username": row["student_id"],
        "Email address": row["email"],
    }


def lms_rows(
    layout: str, assignments: list[str], table: list[dict[str, str]], maxima: dict[str, str]
) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of `layout` from `export.rows`' table (its `assignments` columns,
    a missing submission already filled as `--missing` says)."""
    names = CANVAS_IDENTITY if layout == "canvas" else MOODLE_IDENTITY
    header = [*names, *assignments]
    out = [{**identity(layout, row), **{a: row[a] for a in assignments}} for row in table]
    if layout == "canvas":  # the second row of Canvas's own export
        out.insert(0, {**dict.fromkeys(names, ""), "Student": "Points Possible", **maxima})
    return header, out
