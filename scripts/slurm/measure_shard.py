"""What one task of scripts/slurm/grade.sbatch needs: time and memory of grading a shard of a
real class, the measurement behind the script's `#SBATCH --time` and `--mem` lines.

    python scripts/slurm/measure_shard.py                # 24 ps2 students, 3 shards, --jobs 2
    python scripts/slurm/measure_shard.py --assignment ps8_in_a_model --size 12
    python scripts/slurm/measure_shard.py --size 48 --shards 4 --jobs 2

It builds a class with `tests/demo_course.py` (the course's own config and source): for ps2 the
demo class (one misconception per student, some correct, some blank), for another assignment
its solved source notebook and its blank release in turn. It grades each shard in turn with
`python -m normlab.course grade --shard K/N --jobs J`, as an array task with J CPUs would, under
the default (strict) isolation. Meanwhile it reads, every 0.1 s, the resident memory (VmRSS) of
every process under the command: the sum, as Slurm's jobacct_gather/linux counts a job against
`--mem`, split into the grader's own (the command and its workers) and the kernels'; and at the
end each kernel's own peak from the grading records. Per shard: wall seconds, CPU seconds (the
command's and, from the records, its kernels'), and the seconds a submission held a worker.
Writes results/slurm-shard-<UTC date>.json with the machine and commit. A measurement: nothing
here asserts; tests/course/test_slurm_sbatch.py checks the sbatch lines against the newest record.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat

CHECKOUT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(CHECKOUT / "scripts"))

from grading_bench import load_demo  # noqa: E402 (scripts/, above)
from training_sweep import git_commit  # noqa: E402

from normlab.bench.machine import describe_machine, load_average  # noqa: E402
from normlab.course.grader import assignment_folder  # noqa: E402

PS2 = "ps2_layer_norm"
PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1 << 20
KERNEL = "normlab_sandbox.kernel"


def _tree(root: int) -> list[int]:
    """`root` and every process under it (by parent pid, from /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        found += frontier
    return found


def _resident(pid: int) -> tuple[int, bool]:
    """(resident bytes, whether it is a sandbox kernel or its bwrap) of one process."""
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, IndexError, ValueError):
        return 0, False
    return pages * PAGE, KERNEL.encode() in command or command.startswith(b"bwrap")


class PeakMemory(threading.Thread):
    """Samples the summed resident memory of a process tree until stopped; keeps the peaks."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.done = pid, threading.Event()
        self.total = self.grader = self.kernels = 0

    def run(self) -> None:
        while not self.done.wait(0.1):
            grader = kernels = 0
            for pid in _tree(self.pid):
                size, is_kernel = _resident(pid)
                if is_kernel:
                    kernels += size
                else:
                    grader += size
            self.total = max(self.total, grader + kernels)
            self.grader, self.kernels = max(self.grader, grader), max(self.kernels, kernels)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def make_class(demo, course: Path, assignment: str, size: int) -> None:
    """`size` submissions of `assignment` (see the module docstring)."""
    if assignment == PS2:
        demo.demo_class(course, size)
        return
    solved = nbformat.read(course / "solutions" / assignment / f"{assignment}.ipynb", 4)
    blank = demo.released_notebook(course, assignment)
    for i in range(size):
        demo.write_submission(course, f"student{i + 1:02d}", (solved, blank)[i % 2], assignment)


def grade_shard(course: Path, assignment: str, shard: str, jobs: int, env: dict) -> dict:
    """Grade one shard; its time, CPU and memory (see the module docstring)."""
    records = assignment_folder(course, assignment) / "records"
    before = set(records.glob("*")) if records.exists() else set()
    command = [sys.executable, "-m", "normlab.course", "grade", assignment, "--shard", shard]
    command += ["--jobs", str(jobs), "--no-progress"]
    cpu, start = _children_cpu(), time.monotonic()
    grader = subprocess.Popen(command, cwd=course, env=env, stdout=subprocess.PIPE, text=True)
    memory = PeakMemory(grader.pid)
    memory.start()
    output, _ = grader.communicate()
    wall = time.monotonic() - start
    memory.done.set()
    memory.join()
    if grader.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{output[-3000:]}")
    students = sorted(set(records.glob("*")) - before)
    kernels = [
        json.loads(path.read_text()) for folder in students for path in folder.glob("*.json")
    ]
    return {
        "shard": shard,
        "submissions": len(students),
        "wall_s": round(wall, 2),
        # a kernel in bubblewrap is no waited-for child of the command: its CPU is in its record
        "cpu_s": round(
            _children_cpu() - cpu + sum(k["kernel_cpu_seconds"] or 0 for k in kernels), 2
        ),
        "seconds_per_submission_per_job": round(wall * jobs / max(len(students), 1), 2),
        "peak_rss_mib": round(memory.total / MIB),
        "peak_grader_rss_mib": round(memory.grader / MIB),
        "peak_kernels_rss_mib": round(memory.kernels / MIB),
        "peak_one_kernel_rss_mib": max((k["kernel_peak_mib"] or 0 for k in kernels), default=None),
    }


def measure(assignment: str, size: int, shards: int, jobs: int) -> dict:
    demo = load_demo(CHECKOUT)
    with tempfile.TemporaryDirectory(prefix="slurm-shard-") as tmp:
        course = demo.build_course(Path(tmp) / "course", assignments=(assignment,))
        make_class(demo, course, assignment, size)
        env = demo.course_env()
        tasks = [grade_shard(course, assignment, f"{k}/{shards}", jobs, env) for k in range(shards)]
    per_submission = max(t["seconds_per_submission_per_job"] for t in tasks)
    return {
        "assignment": assignment,
        "class_size": size,
        "shards": shards,
        "jobs": jobs,
        "isolation": "strict",
        "tasks": tasks,
        "max_seconds_per_submission_per_job": per_submission,
        "max_peak_rss_mib": max(t["peak_rss_mib"] for t in tasks),
        "max_peak_grader_rss_mib": max(t["peak_grader_rss_mib"] for t in tasks),
        "max_peak_one_kernel_rss_mib": max(t["peak_one_kernel_rss_mib"] for t in tasks),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default=PS2, help=f"the assignment ({PS2})")
    parser.add_argument("--size", type=int, default=24, help="students in the class (24)")
    parser.add_argument("--shards", type=int, default=3, help="array tasks (3)")
    parser.add_argument("--jobs", type=int, default=2, help="workers per task: its CPUs (2)")
    args = parser.parse_args(argv)
    machine = describe_machine()
    machine["commit"] = git_commit()
    result = measure(args.assignment, args.size, args.shards, args.jobs)
    machine["load_average_end"] = load_average()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = CHECKOUT / "results" / f"slurm-shard-{stamp}.json"
    path.write_text(json.dumps({"machine": machine, **result}, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
