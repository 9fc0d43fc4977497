"""What grading the attack class must leave alone, and how long its worst cells may take."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from security_attacks import STATS_CELLS
from security_course import (
    ATTACK_UID_BASE,
    HONEST,
    JOBS,
    TIMEOUT_S,
    attack_student,
    honest_student,
)

from normlab.course.grader import run_record

pytestmark = [pytest.mark.slow, pytest.mark.kernels]
KILL_MARGIN_S = 5.0  # a loop ends within the cell timeout plus 5 s
LOOP_MARGIN_S = 15.0  # a submission that never returns is graded within one timeout plus 15 s


@pytest.mark.parametrize("part", ["solutions", "exercises", "submitted", "config", "lib"])
def test_grading_changes_nothing_it_must_not(attack_course, part):
    assert attack_course.after[part] == attack_course.before[part]


def test_honest_students_export_rows_are_unchanged_byte_for_byte(attack_course, honest_course):
    alone = honest_course.export_rows()
    among_attackers = attack_course.export_rows()
    for kind in HONEST:
        student = honest_student(kind)
        assert among_attackers[student] == alone[student]


def test_no_grade_was_written_by_hand(attack_course):
    with Gradebook(f"sqlite:///{attack_course.root / 'gradebook.db'}") as gb:
        for submission in gb.assignment_submissions("ps2_layer_norm"):
            for notebook in submission.notebooks:
                assert all(grade.manual_score is None for grade in notebook.grades)


def test_every_submission_is_graded_and_none_lost(attack_course):
    scores = attack_course.scores()
    submitted = {p.name for p in (attack_course.root / "submitted").iterdir()}
    assert set(scores) == submitted
    for student, cells in scores.items():
        assert all(score is not None for score in cells.values()), student


def _sandbox_processes() -> list[str]:
    """Processes of the attack class's kernels (or anything they left) still running: the
    uids that grading alone used when root grades, else sandbox kernels of this user."""
    root = os.geteuid() == 0
    ours = set(range(ATTACK_UID_BASE, ATTACK_UID_BASE + JOBS)) if root else {os.geteuid()}
    found = []
    for folder in Path("/proc").glob("[0-9]*"):
        try:
            uid = folder.stat().st_uid
            command = (folder / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if uid in ours and (root or "normlab_sandbox.kernel" in command):
            found.append(f"{folder.name} {command}")
    return found


def test_no_sandbox_process_outlives_grading(attack_course):
    assert _sandbox_processes() == []


@pytest.mark.parametrize("name", ["infinite_loop", "deaf_loop"])
def test_a_loop_ends_within_the_timeout_plus_5_s(attack_course, name):
    record = attack_course.record(attack_student(name))
    stopped = [c for c in record["cells"] if c["status"] in ("timed out", "kernel died")]
    assert stopped, record
    assert all(c["seconds"] <= TIMEOUT_S + KILL_MARGIN_S for c in stopped), stopped


def test_a_loop_costs_one_timeout_and_only_its_own_cells(attack_course):
    """row_stats loops: its "try it" cell (try_it runs the call in the grader's kernel, as in
    the student's) times out once, and its four checks fail at once, naming the loop."""
    record = attack_course.record(attack_student("infinite_loop"))
    timed_out = [c for c in record["cells"] if c["status"] == "timed out"]
    assert len(timed_out) == 1 and timed_out[0]["grade_id"] is None, timed_out
    by_status = {c["grade_id"]: c["status"] for c in record["cells"] if c["grade_id"]}
    assert {g for g, s in by_status.items() if s == "not run"} == set(STATS_CELLS)
    assert all(s in ("passed", "not run") for s in by_status.values())
    stalled = [c["message"] for c in record["cells"] if c["status"] == "not run"]
    assert all("row_stats ran longer than" in m for m in stalled), stalled


@pytest.mark.parametrize("name", ["infinite_loop", "layer_norm_never_returns"])
def test_a_submission_that_never_returns_is_graded_within_one_timeout(attack_course, name):
    runs = json.loads(run_record(attack_course.root, "ps2_layer_norm").read_text())
    seconds = next(s["seconds"] for s in runs["students"] if s["student"] == attack_student(name))
    assert seconds <= TIMEOUT_S + LOOP_MARGIN_S


def test_a_dead_kernel_is_recorded_with_zeros_and_a_reason(attack_course):
    record = attack_course.record(attack_student("exit_kernel"))
    assert record["kernel"] == "replaced" and "exited with code 3" in record["reason"]
    after = [c for c in record["cells"] if c["status"] in ("kernel died", "not run")]
    assert after and all(c["message"] for c in after)
    scores = attack_course.scores()[attack_student("exit_kernel")]
    assert all(scores[c["grade_id"]] == 0 for c in after if c["grade_id"])
