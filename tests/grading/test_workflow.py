"""Every command on the instructor workflow page, run in order on a temporary course.

The page (instructors/workflow.md) shows bash blocks whose first line says who runs
them: "# instructor, in the course root" or "# student, in their home folder". This
test runs each block as a bash script in that folder, with a temporary exchange in
NBGRADER_EXCHANGE and the course environment on PATH (the course's `.venv` is a link
to this one). Between fetching and submitting, the student fills the notebook with
the source's answers. `jupyter lab` (the formgrader) is started headless, and the
written answer is graded through the formgrader's own REST API, as its Manual
Grading page does. Then the gradebook, the feedback and grades.csv are checked.
"""

from __future__ import annotations

import csv
import json
import os
import re
import socket
import subprocess
import time
import urllib.request
import warnings
from pathlib import Path

import nbformat
import pytest
from course_helpers import REPO, VENV_BIN, nbgrader_env, new_course, read, source_path

from normlab.grading import MANUAL

pytestmark = pytest.mark.slow

PAGE = REPO / "instructors" / "workflow.md"
ASSIGNMENT = "ps6_stability_speed"
(WRITTEN,) = MANUAL[ASSIGNMENT]  # its one answer graded by hand
BLOCK = re.compile(r"```bash\n(.*?)```", re.S)


def page_blocks() -> list[tuple[str, str]]:
    """(who, script) for every bash block of the page, in order."""
    blocks = []
    for body in BLOCK.findall(PAGE.read_text()):
        first = body.splitlines()[0]
        who = "student" if first.startswith("# student") else "instructor"
        assert first.startswith(("# student", "# instructor")), f"unlabelled block: {first}"
        blocks.append((who, body))
    return blocks


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_block(script: str, cwd: Path, env: dict) -> None:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{script}\nfailed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def fill_in(student_home: Path) -> None:
    """The student's work: the source's answers pasted into the fetched notebook."""
    path = student_home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    fetched = read(path)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in read(source_path(ASSIGNMENT)).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    for cell in fetched.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    nbformat.write(fetched, path)


class Formgrader:
    """`jupyter lab` started headless in the course root, and its formgrader API."""

    def __init__(self, course: Path, env: dict, command: str):
        self.port, self.token = free_port(), "course-workflow-test"
        args = command.split() + [
            "--no-browser",
            f"--port={self.port}",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={self.token}",
            "--ServerApp.open_browser=False",
            "--allow-root",
        ]
        self.log = open(course / "jupyter-lab.log", "w")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(args, cwd=course, env=env, stdout=self.log, stderr=self.log)

    def call(self, path: str, method: str = "GET", body=None):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read().decode()
        return json.loads(text) if text else None

    def wait(self, seconds: float = 120.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "jupyter lab exited early"
            try:
                if self.call("/formgrader/api/status")["status"]:
                    return
            except OSError:
                time.sleep(0.5)
        raise AssertionError("the formgrader did not answer")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def grade_by_hand(formgrader: Formgrader, score: float) -> None:
    """What the Manual Grading page does: find the submission's manual grade and PUT a score."""
    notebooks = formgrader.call(f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{ASSIGNMENT}")
    assert len(notebooks) == 1
    grades = formgrader.call(f"/formgrader/api/grades?submission_id={notebooks[0]['id']}")
    manual = [g for g in grades if g["needs_manual_grade"]]
    assert [g["name"] for g in manual] == [WRITTEN]
    formgrader.call(f"/formgrader/api/grade/{manual[0]['id']}", "PUT", {"manual_score": score})


def test_every_command_on_the_workflow_page_runs(tmp_path):
    course = new_course(tmp_path / "course")
    (course / ".venv").symlink_to(VENV_BIN.parent)
    home = tmp_path / "student"
    home.mkdir()
    exchange = tmp_path / "exchange"
    env = nbgrader_env()
    env.update({"NBGRADER_EXCHANGE": str(exchange), "JUPYTER_CONFIG_DIR": str(tmp_path / "jc")})

    ran = []
    for who, script in page_blocks():
        if who == "student":
            run_block(script, home, env)
            if "fetch_assignment" in script:
                fill_in(home)
        elif re.search(r"^jupyter lab\b", script, re.M):
            command = re.search(r"^(jupyter lab.*)$", script, re.M).group(1)
            formgrader = Formgrader(course, env, command.split("#")[0].strip())
            try:
                formgrader.wait()
                grade_by_hand(formgrader, 4.0)
            finally:
                formgrader.stop()
        else:
            run_block(script, course, env)
        ran.append(script)
    assert any("nbgrader export" in s for s in ran) and len(ran) >= 9

    student = os.environ.get("USER") or _whoami()
    from nbgrader.api import Gradebook

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's deprecation chatter
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            sub = gb.find_submission(ASSIGNMENT, student)
            assert (sub.score, sub.max_score) == (17.0, 18.0)  # 13 autograded + 4 of 5 by hand
    feedback = list((home / ASSIGNMENT / "feedback").rglob(f"{ASSIGNMENT}.html"))
    assert len(feedback) == 1 and WRITTEN in feedback[0].read_text()
    with open(course / "grades.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["assignment"] == ASSIGNMENT]
    assert [(r["student_id"], float(r["score"]), float(r["max_score"])) for r in rows] == [
        (student, 17.0, 18.0)
    ]


def _whoami() -> str:
    import getpass

    return getpass.getuser()
