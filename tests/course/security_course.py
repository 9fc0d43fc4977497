"""The adversarial suite's helpers: real courses, submissions, the grader, what it left.

`Graded` is a course after grading: its folder, scores per student and grade cell, the grading
records, the `nbgrader export` rows and the command's wall time. `protected_hashes` fingerprints
what grading must never change. The fixtures that build and grade the classes are in
conftest.py.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from demo_course import (
    PS2,
    PS2_ANSWERS,
    REPO,
    UID_BASE,
    course_env,
    fill,
    gradebook_scores,
    nbgrader_command,
    released_notebook,
    write_submission,
)

from normlab.course.grader import notebook_record

TIMEOUT_S = 5
CONFIG_EXTRA = f"c.Execute.timeout = {TIMEOUT_S}\n"
HONEST = ("correct", "sample_variance", "wrong_axis", "in_place", "one_pass_float32", "unfilled")
JOBS = 2
# the attack class's kernel uids, which no other grading uses (test_integrity checks that none
# of its kernels outlives grading); every other grading takes its worker's range, UID_BASE
ATTACK_UID_BASE = 64008


def honest_student(kind: str) -> str:
    return f"honest_{kind}"


def attack_student(name: str) -> str:
    return f"attack_{name}"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_hashes(folder: Path) -> dict[str, str]:
    """{relative path: sha256} of every file under `folder` (but caches and pip's egg-info)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        built = "__pycache__" in path.parts or any(p.endswith(".egg-info") for p in path.parts)
        if path.is_file() and not built:
            found[str(path.relative_to(folder))] = sha256(path)
    return found


def protected_hashes(course: Path) -> dict[str, dict[str, str]]:
    """What grading must never change: the source, the release, the submissions, the config,
    and the course library in the repo."""
    return {
        "solutions": tree_hashes(course / "solutions"),
        "exercises": tree_hashes(course / "exercises"),
        "submitted": tree_hashes(course / "submitted"),
        "config": {"nbgrader_config.py": sha256(course / "nbgrader_config.py")},
        "lib": tree_hashes(REPO / "lib"),
    }


@dataclass
class Graded:
    """A course after grading, and what the grading left."""

    root: Path
    seconds: float
    output: str
    before: dict = field(default_factory=dict)
    after: dict = field(default_factory=dict)

    def scores(self) -> dict[str, dict[str, float | None]]:
        """{student: {grade_id: score}} from the gradebook."""
        return gradebook_scores(f"sqlite:///{self.root / 'gradebook.db'}")

    def total(self, student: str) -> float:
        return sum(v or 0.0 for v in self.scores()[student].values())

    def record(self, student: str) -> dict:
        return json.loads(notebook_record(self.root, PS2, student, PS2).read_text())

    def notebook(self, student: str):
        return nbformat.read(self.root / "autograded" / student / PS2 / f"{PS2}.ipynb", 4)

    def export_rows(self) -> dict[str, str]:
        """{student: the line of `nbgrader export`'s CSV}, byte for byte."""
        with tempfile.TemporaryDirectory(prefix="normlab-export-") as folder:
            out = Path(folder) / "grades.csv"  # not in the course: other workers read it
            subprocess.run(
                [*nbgrader_command(), "export", "--to", str(out)],
                cwd=self.root,
                env=course_env(),
                check=True,
                capture_output=True,
            )
            lines = out.read_text().splitlines()
        header = next(csv.reader(io.StringIO(lines[0])))
        column = header.index("student_id")
        return {next(csv.reader(io.StringIO(line)))[column]: line for line in lines[1:]}


def apply_edits(nb, edits: dict):
    """The notebook tampering of attacks.py's `notebook_edits`."""
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    if "delete" in edits:
        nb.cells.remove(by_id[edits["delete"]])
    if "replace_source" in edits:
        gid, source = edits["replace_source"]
        by_id[gid].source = source
    if "points" in edits:
        gid, points = edits["points"]
        by_id[gid].metadata["nbgrader"]["points"] = points
    if "fake_output" in edits:
        by_id[edits["fake_output"]].outputs = [
            nbformat.v4.new_output("stream", name="stdout", text="ok\n")
        ]
    return nb


def submit_attacker(course: Path, attack) -> None:
    answers = {"row_stats_answer": attack.row_stats, "layer_norm_answer": attack.layer_norm}
    prepend = [
        source.replace("{course}", str(course)).replace("{repo}", str(REPO))
        for source in attack.prepend
    ]
    nb = fill(released_notebook(course), answers, prepend)
    write_submission(course, attack_student(attack.name), apply_edits(nb, attack.notebook_edits))


def submit_honest(course: Path) -> None:
    for kind in HONEST:
        nb = fill(released_notebook(course), PS2_ANSWERS[kind])
        write_submission(course, honest_student(kind), nb)


def normlab_course(course: Path, *args: str, path_first=None) -> subprocess.CompletedProcess:
    """`python -m normlab.course ARGS` in `course`, as an instructor would run it (with the
    folder `path_first` first on PATH, if given); grade and rerun get this worker's
    `--uid-base` unless ARGS name one."""
    if args[:1] in (("grade",), ("rerun",)) and "--uid-base" not in args:
        args = (*args, "--uid-base", str(UID_BASE))
    env = course_env()
    if path_first:
        env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        [sys.executable, "-m", "normlab.course", *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def run_grader(course: Path, *extra: str, uid_base: int = UID_BASE) -> tuple[float, str]:
    """Grade every submission with the parallel grader; (wall seconds, its output)."""
    start = time.monotonic()
    done = normlab_course(
        course,
        "grade",
        PS2,
        "--jobs",
        str(JOBS),
        "--no-progress",
        "--uid-base",
        str(uid_base),
        *extra,
    )
    seconds = time.monotonic() - start
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-5000:]
    return seconds, output


def run_nbgrader_autograde(course: Path, assignment: str = PS2) -> tuple[float, str]:
    """Grade every submission with plain, serial `nbgrader autograde`; (wall seconds, output)."""
    start = time.monotonic()
    done = subprocess.run(
        [*nbgrader_command(), "autograde", assignment],
        cwd=course,
        env=course_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    return time.monotonic() - start, done.stdout + done.stderr
