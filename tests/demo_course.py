"""A throwaway nbgrader course with a class of ps2 submissions, for the tests, the grading
benchmark (`scripts/grading_bench.py` reads this file from the checkout) and the class
report's demo (`python tests/demo_course.py /tmp/demo-class`). Not part of the installed
package: it needs the checkout's `solutions/` and `nbgrader_config.py` anyway.

    course = build_course(tmp / "course")                 # config + ps2 source, released
    submit(course, "alice", PS2_ANSWERS["correct"])       # a student's notebook, submitted
    demo_class(course, 12)                                # twelve students, one answer each
    gradebook_scores(f"sqlite:///{course / 'gradebook.db'}")  # {student: {grade_id: score}}

`build_course` copies the repo's `nbgrader_config.py` and `solutions/<assignment>/` and runs
`nbgrader generate_assignment`, so the course is the real one. A submission is the released
notebook with its answer cells (found by nbgrader grade_id) replaced; `prepend` adds ordinary
cells right after the setup cell (where an attack would sit). The answers below are written
here, independently of the course's planted bugs: each carries one misconception.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from normlab.grading import CHECKS

REPO = Path(__file__).resolve().parents[1]
PS2 = "ps2_layer_norm"
# Root grades each job slot's kernels under a uid of its own (`--uid-base`; the process limit
# counts per uid). Tests that grade at the same time run in different pytest-xdist workers, so
# each worker takes a range of 16 uids of its own (the attack class has one more of its own,
# security_course.ATTACK_UID_BASE).
UID_BASE = 64016 + 16 * int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))

ROW_STATS = """\
def row_stats(x):
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1)
    var = ((x - mean[..., None]) ** 2).mean(axis=-1)
    return mean, var
"""

LAYER_NORM = """\
def layer_norm(x, gamma, beta, eps=1e-5):
    x = np.asarray(x)
    out_dtype = x.dtype if x.dtype in (np.float32, np.float64) else np.float64
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=-1, keepdims=True)
    var = ((x64 - mu) ** 2).mean(axis=-1, keepdims=True)
    return (gamma * (x64 - mu) / np.sqrt(var + eps) + beta).astype(out_dtype)
"""


def _ln(body: str) -> str:
    return "def layer_norm(x, gamma, beta, eps=1e-5):\n" + body


PS2_ANSWERS: dict[str, dict[str, str]] = {
    "correct": {"row_stats_answer": ROW_STATS, "layer_norm_answer": LAYER_NORM},
    "sample_variance": {
        "row_stats_answer": ROW_STATS.replace(
            "var = ((x - mean[..., None]) ** 2).mean(axis=-1)", "var = x.var(axis=-1, ddof=1)"
        ),
        "layer_norm_answer": LAYER_NORM.replace(
            "var = ((x64 - mu) ** 2).mean(axis=-1, keepdims=True)",
            "var = x64.var(axis=-1, ddof=1, keepdims=True)",
        ),
    },
    "wrong_axis": {
        "row_stats_answer": ROW_STATS.replace("axis=-1", "axis=0").replace("[..., None]", ""),
        "layer_norm_answer": LAYER_NORM.replace("axis=-1", "axis=0"),
    },
    "eps_outside": {
        "row_stats_answer": ROW_STATS,
        "layer_norm_answer": LAYER_NORM.replace("np.sqrt(var + eps)", "(np.sqrt(var) + eps)"),
    },
    "no_gain_bias": {
        "row_stats_answer": ROW_STATS,
        "layer_norm_answer": LAYER_NORM.replace("gamma * (x64 - mu)", "(x64 - mu)").replace(
            " + beta).astype", ").astype"
        ),
    },
    "in_place": {
        "row_stats_answer": ROW_STATS,
        "layer_norm_answer": _ln(
            "    mu = x.mean(axis=-1, keepdims=True)\n"
            "    x -= mu\n"
            "    var = (x ** 2).mean(axis=-1, keepdims=True)\n"
            "    x /= np.sqrt(var + eps)\n"
            "    return gamma * x + beta\n"
        ),
    },
    "one_pass_float32": {
        "row_stats_answer": ROW_STATS,
        "layer_norm_answer": _ln(
            "    x = np.asarray(x)\n"
            "    mu = x.mean(axis=-1, keepdims=True)\n"
            "    var = (x * x).mean(axis=-1, keepdims=True) - mu * mu\n"
            "    return gamma * (x - mu) / np.sqrt(var + eps) + beta\n"
        ),
    },
    "always_float64": {
        "row_stats_answer": ROW_STATS,
        "layer_norm_answer": LAYER_NORM.replace(".astype(out_dtype)", ""),
    },
    CHECKS[PS2].cell.reference_reuse.grade_id: {  # named after its cell (verdicts.json)
        "row_stats_answer": (
            "import normlab\n\n\ndef row_stats(x):\n    return normlab.row_stats(x)\n"
        ),
        "layer_norm_answer": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    return normlab.layer_norm(x, gamma, beta, eps)\n"
        ),
    },
    "keepdims_stats": {
        "row_stats_answer": (
            "def row_stats(x):\n"
            "    x = np.asarray(x, dtype=np.float64)\n"
            "    mean = x.mean(axis=-1, keepdims=True)\n"
            "    return mean, ((x - mean) ** 2).mean(axis=-1, keepdims=True)\n"
        ),
        "layer_norm_answer": LAYER_NORM,
    },
    "chatty": {
        "row_stats_answer": ROW_STATS.replace("    return", "    print('ran')\n    return"),
        "layer_norm_answer": LAYER_NORM,
    },
    "unfilled": {},
}


def nbgrader_command() -> list[str]:
    """nbgrader's CLI of this interpreter's environment."""
    return [str(Path(sys.executable).parent / "nbgrader")]


def course_env() -> dict:
    """The environment for nbgrader commands: this environment's bin first (nbgrader runs
    `alembic` from PATH when it creates a gradebook)."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def build_course(root: Path, assignments=(PS2,), config_extra: str = "") -> Path:
    """A fresh course at `root`: the repo's config and sources, released by nbgrader."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    config = (REPO / "nbgrader_config.py").read_text()
    (root / "nbgrader_config.py").write_text(config + "\n" + config_extra)
    for assignment in assignments:
        shutil.copytree(REPO / "solutions" / assignment, root / "solutions" / assignment)
        subprocess.run(
            [*nbgrader_command(), "generate_assignment", assignment, "--force"],
            cwd=root,
            env=course_env(),
            check=True,
            capture_output=True,
        )
    return root


def released_notebook(root: Path, assignment: str = PS2):
    """The released notebook of `assignment` (a fresh copy to edit)."""
    return nbformat.read(root / "exercises" / assignment / f"{assignment}.ipynb", as_version=4)


def fill(nb, answers: dict[str, str], prepend=()):
    """The notebook with answer cells replaced (by grade_id) and `prepend` cells added after
    the first code cell (the setup cell)."""
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    unknown = set(answers) - {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    if unknown:
        raise KeyError(f"no cells with grade_id {sorted(unknown)}")
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    for offset, source in enumerate(prepend, start=1):
        nb.cells.insert(first_code + offset, nbformat.v4.new_code_cell(source))
    return nb


def write_submission(root: Path, student: str, nb, assignment: str = PS2) -> Path:
    """Put `nb` where `nbgrader collect` would: submitted/<student>/<assignment>/."""
    folder = Path(root) / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{assignment}.ipynb"
    nbformat.write(nb, path)
    (folder / "timestamp.txt").write_text("2026-11-20 12:00:00.000000 UTC")
    return path


def submit(root: Path, student: str, answers: dict[str, str], prepend=(), assignment=PS2):
    """Submit the released notebook filled with `answers` for `student`."""
    nb = fill(released_notebook(root, assignment), answers, prepend)
    return write_submission(root, student, nb, assignment)


def gradebook_scores(db_url: str, assignment: str = PS2) -> dict[str, dict[str, float | None]]:
    """{student: {grade_id: score}} of `assignment` in the gradebook at db_url."""
    found: dict[str, dict[str, float | None]] = {}
    with Gradebook(db_url) as gb:
        for submission in gb.assignment_submissions(assignment):
            cells = found.setdefault(submission.student.id, {})
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    cells[grade.name] = grade.score
    return found


def demo_class(root: Path, size: int = 12) -> dict[str, str]:
    """`size` students, answers taken in turn from PS2_ANSWERS; {student: answer name}."""
    names = list(PS2_ANSWERS)
    roster = {}
    for i in range(size):
        kind = names[i % len(names)]
        student = f"student{i + 1:02d}"
        submit(root, student, PS2_ANSWERS[kind])
        roster[student] = kind
    return roster


def main(argv=None) -> int:
    """`python tests/demo_course.py FOLDER [--size N]`: a demo course to grade and report."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--size", type=int, default=len(PS2_ANSWERS))
    args = parser.parse_args(argv)
    course = build_course(args.folder)
    roster = demo_class(course, args.size)
    print(f"{course}: {len(roster)} students submitted {PS2}; now, in that folder:")
    print(f"  python -m normlab.course grade {PS2} && python -m normlab.course report {PS2}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
