"""A class roster for the hub (`make hub ROSTER=...`, `hub/setup`): read it, or say what is wrong.

The roster is the CSV that `nbgrader db student import` reads (instructors/term.md, section 2):
a header line, then one student a line, with the columns `id` (required: the student's account
name, which is also their nbgrader student id), `first_name`, `last_name` and `email`:

    id,first_name,last_name,email
    alice,Alice,Liddell,alice@example.edu

Every id must be a name a local account can have (Debian's rule: a lowercase letter first, then
lowercase letters, digits, `-` and `_`, at most 32 characters), once, and neither root, the
instructor, nor a system account (uid below 1000). `python3 hub/roster.py FILE INSTRUCTOR`
prints the ids, one a line, or exits with status 2 and one line naming the file, the line and
the problem. Standard library only: it runs with Debian's own python3, before any venv exists.
"""

from __future__ import annotations

import csv
import pwd
import re
import sys
from pathlib import Path

COLUMNS = ("id", "first_name", "last_name", "email")
ACCOUNT_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
FIRST_USER_UID = 1000  # Debian's UID_MIN: below it, system accounts


class RosterError(ValueError):
    """What is wrong with a roster, in one line that names the file and the line."""


def system_account(name: str) -> bool:
    """Whether `name` is an existing account with a uid below FIRST_USER_UID (root included)."""
    try:
        return pwd.getpwnam(name).pw_uid < FIRST_USER_UID
    except KeyError:
        return False


def check_account_name(name: str, where: str) -> None:
    """Refuse a name no student account may have, saying why."""
    if not ACCOUNT_NAME.fullmatch(name):
        raise RosterError(
            f"{where}: {name!r} is not an account name (a lowercase letter, then lowercase "
            "letters, digits, '-' or '_', at most 32 characters)"
        )
    if system_account(name):
        raise RosterError(f"{where}: {name!r} is a system account, not a student's")


def read_roster(path: Path, instructor: str) -> list[dict[str, str]]:
    """The students of the roster at `path`, each a dict of COLUMNS (missing ones empty)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise RosterError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise RosterError(f"{path}: not UTF-8 text (save the CSV as UTF-8)") from None
    rows = csv.reader(text.splitlines())
    header = [name.strip() for name in next(rows, [])]
    if "id" not in header:
        raise RosterError(
            f"{path}, line 1: the header has no 'id' column (expected {','.join(COLUMNS)})"
        )
    unknown = [name for name in header if name not in COLUMNS]
    if unknown:
        raise RosterError(
            f"{path}, line 1: unknown column(s) {', '.join(map(repr, unknown))} "
            f"(the columns are {','.join(COLUMNS)})"
        )
    students, seen = [], {}
    for number, row in enumerate(rows, start=2):
        if not any(field.strip() for field in row):
            continue  # a blank line
        where = f"{path}, line {number}"
        if len(row) != len(header):
            raise RosterError(f"{where}: {len(row)} fields, the header has {len(header)}")
        student = {name: "" for name in COLUMNS}
        student.update({name: field.strip() for name, field in zip(header, row, strict=True)})
        name = student["id"]
        check_account_name(name, where)
        if name == instructor:
            raise RosterError(f"{where}: {name!r} is the instructor, not a student")
        if name in seen:
            raise RosterError(f"{where}: {name!r} is already on line {seen[name]}")
        seen[name] = number
        students.append(student)
    if not students:
        raise RosterError(f"{path}: no student (a header line, then one student a line)")
    return students


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python3 hub/roster.py ROSTER.csv INSTRUCTOR", file=sys.stderr)
        return 2
    path, instructor = Path(argv[0]), argv[1]
    try:
        check_account_name(instructor, "the instructor")
        students = read_roster(path, instructor)
    except RosterError as error:
        print(f"roster: {error}", file=sys.stderr)
        return 2
    for student in students:
        print(student["id"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
