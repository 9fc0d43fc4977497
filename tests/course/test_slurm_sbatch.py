"""scripts/slurm/grade.sbatch: the command an array task runs, and its `#SBATCH` time and memory
against the measurement they come from (scripts/slurm/measure_shard.py's newest records in
results/). The array itself runs on a real Slurm in tests/e2e/test_slurm.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from normlab.course.grader.execute import BUDGET_CELL_TIMEOUTS
from normlab.course.grader.isolation import Limits
from normlab.grading import REAL_TORCH

REPO = Path(__file__).resolve().parents[2]
SBATCH = REPO / "scripts" / "slurm" / "grade.sbatch"
MIB = 1 << 20
SUBMISSIONS_PER_TASK = 60  # what the script says it is sized for
LOOPERS = 5  # ... and how many of them may loop to the end of their notebook budget


def sbatch_option(name: str) -> str:
    [value] = re.findall(rf"^#SBATCH --{name}=(\S+)$", SBATCH.read_text(), re.M)
    return value


def seconds(slurm_time: str) -> int:
    hours, minutes, secs = (int(part) for part in slurm_time.split(":"))
    return 3600 * hours + 60 * minutes + secs


def mebibytes(slurm_memory: str) -> int:
    number, unit = int(slurm_memory[:-1]), slurm_memory[-1]
    return number * {"M": 1, "G": 1024}[unit]


def newest_records() -> dict[str, dict]:
    """{assignment: the newest results/slurm-shard-*.json that measured it}."""
    found = {}
    for path in sorted((REPO / "results").glob("slurm-shard-*.json")):  # dated names: oldest first
        record = json.loads(path.read_text())
        found[record["assignment"]] = record
    return found


def cell_timeout() -> int:
    [value] = re.findall(
        r"^c\.Execute\.timeout = (\d+)$", (REPO / "nbgrader_config.py").read_text(), re.M
    )
    return int(value)


def test_a_plain_and_a_torch_assignment_were_measured_as_a_task_runs():
    records = newest_records()
    assert {"ps2_layer_norm", *REAL_TORCH} <= set(records)
    for record in records.values():
        assert (
            record["jobs"] == int(sbatch_option("cpus-per-task"))
            and record["isolation"] == "strict"
        )
        assert all(task["submissions"] > 0 for task in record["tasks"])


@pytest.mark.parametrize("assignment", ["ps2_layer_norm", *REAL_TORCH])
def test_the_memory_holds_the_grader_measured_and_every_kernel_at_its_limit(assignment):
    record = newest_records()[assignment]
    cpus = int(sbatch_option("cpus-per-task"))
    kernels = cpus * Limits().memory_bytes // MIB
    assert mebibytes(sbatch_option("mem")) >= record["max_peak_grader_rss_mib"] + kernels
    assert f"{record['max_peak_grader_rss_mib']} MiB" in SBATCH.read_text()


@pytest.mark.parametrize("assignment", ["ps2_layer_norm", *REAL_TORCH])
def test_the_time_holds_a_full_task_and_its_loopers_at_the_measured_pace(assignment):
    record = newest_records()[assignment]
    cpus = int(sbatch_option("cpus-per-task"))
    pace = record["max_seconds_per_submission_per_job"]
    budget = BUDGET_CELL_TIMEOUTS * cell_timeout()
    needed = (SUBMISSIONS_PER_TASK * pace + LOOPERS * budget) / cpus
    assert seconds(sbatch_option("time")) >= needed
    text = SBATCH.read_text()
    assert f"{pace:.1f} s" in text and f"up to {SUBMISSIONS_PER_TASK} submissions" in text
    assert "five of them that loop" in text and f"{BUDGET_CELL_TIMEOUTS} cell timeouts" in text


FAKE_PYTHON = """#!/bin/sh
echo "cwd=$(pwd)"
echo "args=$*"
"""


def run_task(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """The script run by bash as Slurm would run array task K, with PYTHON a stand-in that
    prints where it runs and what it was asked."""
    python = tmp_path / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    task = {"SLURM_SUBMIT_DIR": str(tmp_path), "SLURM_CPUS_PER_TASK": "2", "PYTHON": str(python)}
    return subprocess.run(
        ["bash", str(SBATCH)],
        env={"PATH": os.environ["PATH"], **task, **env},
        capture_output=True,
        text=True,
    )


def test_task_k_grades_shard_k_of_n_from_the_course_root_with_a_job_per_cpu(tmp_path):
    done = run_task(
        tmp_path, SLURM_ARRAY_TASK_ID="1", ASSIGNMENT="ps3_axes", SHARDS="3", GRADE_ARGS="--force"
    )
    assert done.returncode == 0, done.stderr
    assert f"cwd={tmp_path}" in done.stdout
    [args] = re.findall(r"^args=(.*)$", done.stdout, re.M)
    expected = "-m normlab.course grade ps3_axes --shard 1/3 --jobs 2 --no-progress"
    if os.geteuid() == 0:  # each task's kernels take uids of their own
        expected += " --uid-base 64102"
    assert args == expected + " --force"


@pytest.mark.parametrize("missing", ["SLURM_ARRAY_TASK_ID", "ASSIGNMENT", "SHARDS"])
def test_a_task_without_its_index_assignment_or_shards_says_how_to_submit(tmp_path, missing):
    env = {"SLURM_ARRAY_TASK_ID": "0", "ASSIGNMENT": "ps2_layer_norm", "SHARDS": "3"}
    del env[missing]
    done = run_task(tmp_path, **env)
    assert done.returncode != 0 and "args=" not in done.stdout
    assert missing in done.stderr and "sbatch --array=0-(N-1)" in done.stderr
