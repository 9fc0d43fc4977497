"""A class graded by a Slurm job array (scripts/slurm/grade.sbatch, instructors/cluster.md), on
the one-node cluster `make slurm-up` starts: the array's gradebook equals one plain run's, cell
for cell, before and after a task is cancelled mid-run and submitted again.

`.ci/slurm` (run by CI as root) starts the cluster, runs this file with NORMLAB_SLURM=1 and
stops the cluster. A class of 12 ps2 submissions, one of each answer of tests/demo_course.py's
PS2_ANSWERS (a misconception each, some correct, some blank; 3, 4 and 5 to the three tasks), is
copied three times: one is graded by one plain
`python -m normlab.course grade`, one by a 3-task array, one by a second array one of whose
tasks is cancelled (`scancel`, SIGTERM then SIGKILL, as at a time limit) while a kernel runs
and then submitted alone again. The tasks ask for one CPU each, so two run at once on this
2-CPU node, both writing the one SQLite gradebook.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from demo_course import PS2, PS2_ANSWERS, build_course, course_env, demo_class, gradebook_scores

from normlab.course.grader import staging_step
from normlab.course.grader.class_run import Shard

REPO = Path(__file__).resolve().parents[2]
SBATCH = REPO / "scripts" / "slurm" / "grade.sbatch"
SIZE, SHARDS = len(PS2_ANSWERS), 3
PLAIN_UID_BASE, ARRAY_UID_BASE = 64700, 64800  # kernel uids no other grading of CI takes
WAIT_S = 600
SUMMARY = re.compile(r"\(shard (\d+)/\d+\): (\d+) graded, (\d+) failed, (\d+) skipped")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("NORMLAB_SLURM") != "1" or shutil.which("sbatch") is None,
        reason="needs the cluster that .ci/slurm starts (make slurm-up, as root)",
    ),
]


def scores(course: Path) -> dict[str, dict[str, float | None]]:
    return gradebook_scores(f"sqlite:///{course / 'gradebook.db'}")


def graded_folders(course: Path) -> set[str]:
    return {path.parent.name for path in (course / "autograded").glob(f"*/{PS2}")}


def submit(course: Path, array: str = f"0-{SHARDS - 1}") -> str:
    """sbatch the course's array (tasks `array`) from the course root; its job id."""
    exports = (
        f"ALL,ASSIGNMENT={PS2},SHARDS={SHARDS},PYTHON={sys.executable},UID_BASE={ARRAY_UID_BASE}"
    )
    done = subprocess.run(
        ["sbatch", "--parsable", f"--array={array}", "--cpus-per-task=1", f"--export={exports}"]
        + [str(SBATCH)],
        cwd=course,
        env=course_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().split(";")[0]


def task_indices(text: str) -> list[int]:
    """Slurm's array task list ('2', '0-2', '0,2-3', '1-7%2': at most 2 at once) -> indices."""
    found = []
    for part in text.split("%")[0].split(","):
        first, _, last = part.partition("-")
        found += range(int(first), int(last or first) + 1)
    return found


def states(job: str) -> dict[int, str]:
    """{array task index: its state}, from the controller (which keeps a finished job's record
    for MinJobAge, 300 s); tasks still pending together share a line ('ArrayTaskId=1-2')."""
    shown = subprocess.run(
        ["scontrol", "--oneliner", "show", "job", job], capture_output=True, text=True, check=True
    ).stdout
    return {
        index: state
        for tasks, state in re.findall(r"ArrayTaskId=(\S+) .*?JobState=(\S+)", shown)
        for index in task_indices(tasks)
    }


def wait(job: str) -> dict[int, str]:
    """Wait until every task of the job has ended and left the queue (squeue lists a task
    whose processes are still being ended, COMPLETING); their final states."""
    deadline = time.monotonic() + WAIT_S
    while subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True).stdout:
        assert time.monotonic() < deadline, f"job {job} still in the queue after {WAIT_S} s"
        time.sleep(0.5)
    return states(job)


def summaries(course: Path, job: str) -> dict[int, tuple[int, int, int]]:
    """{shard: (graded, failed, skipped)} from each task's log that ran to its summary."""
    found = {}
    for log in course.glob(f"slurm-{job}_*.out"):
        for shard, *counts in SUMMARY.findall(log.read_text()):
            found[int(shard)] = tuple(int(c) for c in counts)
    return found


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """The class, submitted and not graded (copied for each grading)."""
    course = build_course(tmp_path_factory.mktemp("slurm") / "fresh")
    demo_class(course, SIZE)
    return course


def copy(fresh: Path, name: str) -> Path:
    return Path(shutil.copytree(fresh, fresh.parent / name))


@pytest.fixture(scope="module")
def plain(fresh) -> dict:
    """One plain run's scores."""
    course = copy(fresh, "plain")
    command = [sys.executable, "-m", "normlab.course", "grade", PS2, "--jobs", "2"]
    command += ["--no-progress", "--uid-base", str(PLAIN_UID_BASE)]
    done = subprocess.run(command, cwd=course, env=course_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    graded = scores(course)
    assert len(graded) == SIZE
    assert all(v is not None for cells in graded.values() for v in cells.values())
    return graded


@pytest.fixture(scope="module")
def arrayed(fresh) -> tuple[Path, str]:
    """The class graded by a 3-task array: the course and the job id."""
    course = copy(fresh, "array")
    job = submit(course)
    assert set(wait(job).values()) == {"COMPLETED"}, states(job)
    return course, job


def test_the_array_grades_each_submission_once_and_gives_one_runs_scores(arrayed, plain):
    course, job = arrayed
    done = summaries(course, job)
    assert sorted(done) == list(range(SHARDS))
    assert sum(graded for graded, _, _ in done.values()) == SIZE
    assert all(failed == skipped == 0 for _, failed, skipped in done.values())
    assert scores(course) == plain


def test_a_second_array_over_the_graded_class_grades_nothing_and_says_so(arrayed, plain):
    course, _ = arrayed
    job = submit(course)
    assert set(wait(job).values()) == {"COMPLETED"}
    done = summaries(course, job)
    assert [graded for graded, _, _ in done.values()] == [0] * SHARDS
    assert sum(skipped for _, _, skipped in done.values()) == SIZE
    assert scores(course) == plain


def test_a_task_cancelled_mid_run_and_submitted_again_gives_one_runs_scores(fresh, plain):
    course = copy(fresh, "cancelled")
    parts = [{s for s in plain if Shard(k, SHARDS).holds(s)} for k in range(SHARDS)]
    task = max(range(SHARDS), key=lambda k: len(parts[k]))  # the longest: time to cancel it
    job = submit(course)
    deadline = time.monotonic() + WAIT_S
    while not graded_folders(course) & parts[task]:  # cancel once one of its part is graded
        assert states(job)[task] in ("PENDING", "RUNNING"), "the task ended before its cancel"
        assert time.monotonic() < deadline, f"nothing of task {task}'s part graded in {WAIT_S} s"
        time.sleep(0.1)
    subprocess.run(["scancel", f"{job}_{task}"], check=True)
    final = wait(job)
    assert final[task] == "CANCELLED" and all(final[k] == "COMPLETED" for k in final if k != task)

    # nothing half-written: a folder only for a submission graded to the end, with its scores
    kept = graded_folders(course) & parts[task]
    assert 0 < len(kept) < len(parts[task]), "the cancel came after the task's last submission"
    now = scores(course)
    assert all(now[student] == plain[student] for student in graded_folders(course))

    again = submit(course, array=str(task))
    assert set(wait(again).values()) == {"COMPLETED"}
    assert summaries(course, again) == {task: (len(parts[task]) - len(kept), 0, len(kept))}
    assert scores(course) == plain
    assert graded_folders(course) == set(plain)
    assert not list((course / staging_step(PS2)).glob(f"*/{PS2}/*.ipynb"))
