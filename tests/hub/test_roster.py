"""`make hub ROSTER=...` reads the class from a CSV, or says which line is wrong (hub/roster.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "hub" / "roster.py"
_spec = importlib.util.spec_from_file_location("hub_roster", SCRIPT)
roster = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(roster)

HEADER = "id,first_name,last_name,email\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_demo_roster_is_the_term_pages_class():
    students = roster.read_roster(REPO / "hub" / "demo-roster.csv", "instructor")
    assert [s["id"] for s in students] == ["alice", "bob"]
    assert students[0] == {
        "id": "alice",
        "first_name": "Alice",
        "last_name": "Liddell",
        "email": "alice@example.edu",
    }


def test_an_id_column_alone_is_enough(tmp_path):
    students = roster.read_roster(write(tmp_path, "id\ncarol\n\ndave\n"), "instructor")
    assert [s["id"] for s in students] == ["carol", "dave"]
    assert students[0]["email"] == ""


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("first_name,email\nCarol,c@example.edu\n", "line 1: the header has no 'id' column"),
        ("id,name\ncarol,Carol\n", "line 1: unknown column(s) 'name'"),
        (HEADER + "carol,Carol\n", "line 2: 2 fields, the header has 4"),
        (HEADER + "Carol,Carol,C,c@example.edu\n", "line 2: 'Carol' is not an account name"),
        (HEADER + "root,R,R,r@example.edu\n", "line 2: 'root' is a system account"),
        (HEADER + "instructor,I,I,i@example.edu\n", "line 2: 'instructor' is the instructor"),
        (HEADER + "carol,C,C,c@x\ncarol,C,C,c@x\n", "line 3: 'carol' is already on line 2"),
        (HEADER, "no student"),
    ],
)
def test_a_bad_roster_is_refused_with_its_line(tmp_path, text, says):
    path = write(tmp_path, text)
    with pytest.raises(roster.RosterError) as refused:
        roster.read_roster(path, "instructor")
    assert str(path) in str(refused.value) and says in str(refused.value), refused.value


def test_the_command_prints_the_ids_or_one_line_and_status_2(tmp_path):
    good = subprocess.run(
        [sys.executable, str(SCRIPT), str(REPO / "hub" / "demo-roster.csv"), "instructor"],
        capture_output=True,
        text=True,
    )
    assert (good.returncode, good.stdout) == (0, "alice\nbob\n")
    missing = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "none.csv"), "instructor"],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2
    assert missing.stderr == f"roster: {tmp_path / 'none.csv'}: no such file\n"
