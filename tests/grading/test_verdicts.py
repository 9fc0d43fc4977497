"""Every judge's message on a bank of submissions, compared with a recorded snapshot.

For every assignment, every CheckSpec of `normlab.grading.CHECKS` runs its visible and its
hidden battery against a bank of submissions: the instructor's solutions, the blank
releases (NotImplementedError stubs), the planted bugs of `course_bank.BANK`, the answers
of `demo_course.PS2_ANSWERS` (tests/demo_course.py), normlab's red team in place of the student's
LayerNorm, batch-norm and RMSNorm, and a few answers of its own (`EXTRA`). Each judge's
message (None for a pass) is compared with `verdicts.json`, recorded on the code before
the grading package was refactored, so a refactoring that changes a verdict or a word of
a message fails here.

A message changed on purpose is re-recorded with

    .venv/bin/python tests/grading/test_verdicts.py --update

and the diff of `verdicts.json` shows every message that changed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

# run as a script (--update): its helpers here, and the shared ones in tests/
sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

import demo_course as demo  # noqa: E402
from course_bank import BANK  # noqa: E402
from course_helpers import (  # noqa: E402
    read,
    release_path,
    run_in_process,
    source_path,
    with_bug,
)

from normlab import red_team  # noqa: E402
from normlab.grading import ASSIGNMENTS, CHECKS, DEFAULT_SEED, run_cases  # noqa: E402

SNAPSHOT = Path(__file__).with_name("verdicts.json")

# answers no other bank holds: assignment -> name -> source defining the student's functions
EXTRA = {
    "ps2_layer_norm": {
        "running-statistics": """
running = {}

def layer_norm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    if var.shape in running:
        var = 0.5 * var + 0.5 * running[var.shape]
    running[var.shape] = var
    return gamma * (x - mu) / np.sqrt(var + eps) + beta
""",
    },
    "ps4_rmsnorm": {
        "zhang-sennrich-eps": """
def rms_norm(x, gamma, eps=1e-8):
    x = np.asarray(x, dtype=np.float64)
    return gamma * x / (np.sqrt((x * x).mean(axis=-1, keepdims=True)) + eps)
""",
    },
}


def _as_rms_norm(fn):
    """A red-team LayerNorm called as the student's rms_norm(x, gamma, eps)."""

    def rms_norm(x, gamma, eps=1e-6):
        return fn(x, gamma, None, eps)

    return rms_norm


def submissions() -> dict[str, tuple[str, dict]]:
    """name -> (assignment, namespace) for every submission of the bank."""
    bank: dict[str, tuple[str, dict]] = {}
    for assignment in ASSIGNMENTS:
        solution = run_in_process(read(source_path(assignment)))
        bank[f"{assignment}/solution"] = (assignment, solution)
        bank[f"{assignment}/blank"] = (assignment, run_in_process(read(release_path(assignment))))
        bank[f"{assignment}/nothing defined"] = (assignment, {})
        for bug, (edits, _) in BANK.get(assignment, {}).items():
            nb = with_bug(read(source_path(assignment)), edits)
            bank[f"{assignment}/bank:{bug}"] = (assignment, run_in_process(nb))
    for assignment, answers in EXTRA.items():
        for name, source in answers.items():
            namespace = {"np": np}
            exec(source, namespace)  # noqa: S102 (the bank's own answers)
            bank[f"{assignment}/extra:{name}"] = (assignment, namespace)
    for name, answers in demo.PS2_ANSWERS.items():
        nb = demo.fill(read(release_path(demo.PS2)), answers)
        bank[f"{demo.PS2}/demo:{name}"] = (demo.PS2, run_in_process(nb))
    ps2 = run_in_process(read(source_path("ps2_layer_norm")))
    ps3 = run_in_process(read(source_path("ps3_axes")))
    for name, planted in red_team.RED_TEAM.items():
        as_student = {
            "ps2_layer_norm": {**ps2, "layer_norm": planted.fn},
            "ps3_axes": {**ps3, "batch_norm": planted.fn},
            "ps4_rmsnorm": {"rms_norm": _as_rms_norm(planted.fn)},
        }
        for assignment, namespace in as_student.items():
            bank[f"{assignment}/red_team:{name}"] = (assignment, namespace)
    return bank


def messages(assignment: str, namespace: dict) -> dict[str, dict[str, str | None]]:
    """grade_id -> {"visible": message, "hidden": message} for one submission."""
    found = {}
    for grade_id, spec in CHECKS[assignment].items():
        found[grade_id] = {}
        for battery, hidden in (("visible", False), ("hidden", True)):
            cases = spec.make_cases(DEFAULT_SEED, hidden=hidden)
            found[grade_id][battery] = spec.judge(cases, run_cases(namespace, cases))
    return found


def record() -> dict:
    with np.errstate(all="ignore"):
        return {name: messages(*entry) for name, entry in sorted(submissions().items())}


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def now() -> dict:
    return record()


def test_the_bank_is_the_recorded_one(recorded, now):
    assert sorted(now) == sorted(recorded)


def test_every_message_is_the_recorded_one(recorded, now):
    changed = [
        f"{name} {grade_id} {battery}:\n  was {was!r}\n  now {got!r}"
        for name, cells in now.items()
        for grade_id, batteries in cells.items()
        for battery, got in batteries.items()
        if (was := recorded.get(name, {}).get(grade_id, {}).get(battery, "<absent>")) != got
    ]
    assert changed == [], "\n".join(changed)


def test_the_bank_fails_and_passes_cells():
    """The snapshot is only worth something if the bank exercises both verdicts of each cell."""
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    for assignment in ASSIGNMENTS:
        for grade_id in CHECKS[assignment]:
            seen = [
                cells[grade_id]["hidden"]
                for name, cells in snapshot.items()
                if name.startswith(assignment + "/")
            ]
            assert None in seen, f"no submission passes {assignment}:{grade_id}"
            assert any(m is not None for m in seen), f"none fails {assignment}:{grade_id}"


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(f"usage: {sys.argv[0]} --update   (re-record {SNAPSHOT.name})")
    SNAPSHOT.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
