"""The "Operating a term" page (instructors/term.md), every block run as the account it names.

`.ci/term-as-users` (run by CI as root) creates the accounts `instructor`, `alice` and `bob`,
puts a copy of the course, with its own `.venv`, in the instructor's home, and runs this file
with NORMLAB_TERM_COURSE pointing at it. Each bash block of the page runs, in order, as the
account its first line names ("# instructor", "# student" = every student, "# student alice"),
in a login-free shell with the course environment on PATH and NBGRADER_EXCHANGE set, as the
page's readers would have it. Between blocks the test does what the page leaves to people: the
registrar's roster, the instructor's edit of a check's points, Alice's and Bob's work, Bob's
email. Then the gradebook, the students' feedback and the exported grades are checked.
"""

from __future__ import annotations

import csv
import os
import pwd
import re
import shutil
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "instructors" / "term.md"
BLOCK = re.compile(r"```bash\n(.*?)```", re.S)
COURSE = os.environ.get("NORMLAB_TERM_COURSE")
STUDENTS = ("alice", "bob")
PS2 = "ps2_layer_norm"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        COURSE is None or os.geteuid() != 0,
        reason="needs the accounts and course that .ci/term-as-users (root) sets up",
    ),
]


def page_blocks() -> list[tuple[str, str]]:
    """(first line, script) of every bash block of the page, in order."""
    return [(body.splitlines()[0], body) for body in BLOCK.findall(PAGE.read_text())]


def accounts(first_line: str) -> list[str]:
    if first_line.startswith("# instructor"):
        return ["instructor"]
    if first_line.startswith("# student alice"):
        return ["alice"]
    if first_line.startswith("# student,"):
        return list(STUDENTS)
    raise AssertionError(f"a block whose first line names nobody: {first_line}")


def home(user: str) -> Path:
    return Path(pwd.getpwnam(user).pw_dir)


def as_user(user: str, script: str, cwd: Path, exchange: Path) -> str:
    """Run `script` as `user` in `cwd`; return its output (fail the test on an error)."""
    venv_bin = Path(COURSE) / ".venv" / "bin"
    env = {
        "HOME": str(home(user)),
        "USER": user,
        "LOGNAME": user,
        "LANG": "C.UTF-8",
        "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
        "NBGRADER_EXCHANGE": str(exchange),
    }
    done = subprocess.run(
        [
            "runuser",
            "-u",
            user,
            "--",
            "env",
            "-i",
            *[f"{k}={v}" for k, v in env.items()],
            "bash",
            "-euo",
            "pipefail",
            "-c",
            script,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (
        f"as {user}:\n{script}\nfailed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout + done.stderr


def write_as(user: str, path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    account = pwd.getpwnam(user)
    for part in [path, *path.parents]:
        if part == home(user) or not str(part).startswith(str(home(user))):
            break
        os.chown(part, account.pw_uid, account.pw_gid)


def answered(student: str) -> str:
    """The student's fetched ps2 notebook with the instructor's solution in its answer cells."""
    fetched = nbformat.read(home(student) / PS2 / f"{PS2}.ipynb", as_version=4)
    source = nbformat.read(Path(COURSE) / "solutions" / PS2 / f"{PS2}.ipynb", as_version=4)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    for cell in fetched.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return nbformat.writes(fetched)


def before(first_line: str, script: str, course: Path) -> None:
    """What people do between the page's blocks."""
    if "roster.csv" in script:
        write_as(
            "instructor",
            course / "roster.csv",
            "id,first_name,last_name,email\n"
            "alice,Alice,Liddell,alice@example.edu\nbob,Bob,Babbage,bob@example.edu\n",
        )
    if "make release" in script:  # the instructor's edit: the axis check from 3 to 4 points
        checks = course / "lib" / "normlab" / "grading" / f"{PS2}.py"
        text, count = re.subn(r"(axis\w*\(.*points=)3\b", r"\g<1>4", checks.read_text())
        assert count == 1, "the axis check's points=3 is not where the page says"
        checks.write_text(text)
    if first_line.startswith("# student alice"):
        write_as("alice", home("alice") / PS2 / f"{PS2}.ipynb", answered("alice"))
    if "emailed notebook" in first_line:
        write_as("instructor", home("instructor") / "mail" / f"{PS2}.ipynb", answered("bob"))


@pytest.fixture(scope="module")
def term() -> dict:
    course = Path(COURSE)
    exchange = home("instructor") / "nbgrader-exchange"
    shutil.rmtree(exchange, ignore_errors=True)
    started, outputs = time.monotonic(), []
    for first_line, script in page_blocks():
        before(first_line, script, course)
        for user in accounts(first_line):
            cwd = course if user == "instructor" else home(user)
            block_started = time.monotonic()
            outputs.append(as_user(user, script, cwd, exchange))
            print(f"{time.monotonic() - block_started:6.1f} s  {user}: {first_line}")
    seconds = time.monotonic() - started
    print(f"\nthe term page's blocks ran in {seconds:.0f} s")  # CI's log (pytest -s)
    return {"course": course, "seconds": seconds, "log": "\n".join(outputs)}


def scores(course: Path) -> dict[str, dict[str, float]]:
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in STUDENTS:
            submission = gb.find_submission(PS2, student)
            found[student] = {
                "score": submission.score,
                "penalty": submission.late_submission_penalty,
                "max": submission.max_score,
            }
    return found


def test_the_roster_names_the_students(term):
    assert "alice (Liddell, Alice" in term["log"] and "bob (Babbage, Bob" in term["log"]


def test_the_new_points_reach_the_gradebook(term):
    assert {s["max"] for s in scores(term["course"]).values()} == {26.0}


def test_alice_on_time_bob_by_email_two_days_late(term):
    found = scores(term["course"])
    assert found["alice"] == {"score": 26.0, "penalty": 0.0, "max": 26.0}
    assert found["bob"]["score"] == 26.0
    assert found["bob"]["penalty"] == pytest.approx(0.2 * 26.0)


def test_alice_fetched_her_feedback_and_bobs_waits_to_be_mailed(term):
    pages = list((home("alice") / PS2 / "feedback").glob(f"*/{PS2}.html"))
    assert len(pages) == 1
    assert "BEGIN HIDDEN TESTS" not in pages[0].read_text()
    assert not (home("bob") / PS2 / "feedback").exists()
    mailed = term["course"] / "feedback" / "bob" / PS2 / f"{PS2}.html"
    assert "BEGIN HIDDEN TESTS" not in mailed.read_text()


def test_the_export_has_a_row_per_student(term):
    with open(term["course"] / "grades-per-student.csv", newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert rows["alice"][PS2] == "26" and rows["alice"]["last_name"] == "Liddell"
    assert rows["bob"][PS2] == "20.8" and rows["bob"]["total"] == "20.8"
    assert set(rows["alice"]) == {"student_id", "first_name", "last_name", "email", PS2, "total"}
