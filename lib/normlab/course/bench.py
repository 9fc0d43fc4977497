"""Grading throughput: serial `nbgrader autograde` against `python -m normlab.course grade`.

    python -m normlab.course.bench                    # 12 ps2 submissions, --jobs = CPUs
    python -m normlab.course.bench --size 24 --jobs 4 --repeat 3 --json

Builds a demo course (`demo.demo_class`: one misconception per student, some correct), copies
it, and in the same run times both commands from the same fresh state, each as a whole command
(start-up included), `repeat` times in alternation so that a busy machine slows both alike.
Reports the median wall time of each, their ratio, CPU seconds per submission (the command and
every process under it), and whether every student's every cell got the same score in both
gradebooks. It is a measurement, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nbgrader.api import Gradebook

from .demo import PS2, build_course, course_env, demo_class, nbgrader_command


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its descendants)."""
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=course_env(), capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return wall, _children_cpu() - cpu


def scores(course: Path, assignment: str = PS2) -> dict[tuple[str, str], float | None]:
    """{(student, grade_id): auto_score} from a course's gradebook."""
    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for submission in gb.assignment_submissions(assignment):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    found[(submission.student.id, grade.name)] = grade.auto_score
    return found


def run(size: int, jobs: int, repeat: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        template = build_course(Path(tmp) / "template")
        demo_class(template, size)
        serial_cmd = [*nbgrader_command(), "autograde", PS2]
        parallel_cmd = [
            sys.executable,
            "-m",
            "normlab.course",
            "grade",
            PS2,
            "--jobs",
            str(jobs),
            "--no-progress",
        ]
        rows = {"serial": [], "parallel": []}
        same = True
        for i in range(repeat):
            courses = {}
            for kind, command in (("serial", serial_cmd), ("parallel", parallel_cmd)):
                course = Path(tmp) / f"{kind}-{i}"
                shutil.copytree(template, course)
                rows[kind].append(timed(command, course))
                courses[kind] = course
            same &= scores(courses["serial"]) == scores(courses["parallel"])
            graded = scores(courses["parallel"])
    serial_wall = statistics.median(w for w, _ in rows["serial"])
    parallel_wall = statistics.median(w for w, _ in rows["parallel"])
    return {
        "submissions": size,
        "jobs": jobs,
        "cpus": os.cpu_count(),
        "repeat": repeat,
        "serial_wall_s": round(serial_wall, 2),
        "parallel_wall_s": round(parallel_wall, 2),
        "speedup": round(serial_wall / parallel_wall, 2),
        "serial_cpu_s_per_submission": round(
            statistics.median(c for _, c in rows["serial"]) / size, 3
        ),
        "parallel_cpu_s_per_submission": round(
            statistics.median(c for _, c in rows["parallel"]) / size, 3
        ),
        "identical_scores": bool(same),
        "cells_compared": len(graded),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=12, help="submissions (default 12)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeat", type=int, default=2, help="alternating runs of each")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = run(args.size, args.jobs, args.repeat)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(
            f"{result['submissions']} ps2 submissions, {result['cpus']} CPUs, "
            f"median of {result['repeat']}:\n"
            f"  serial nbgrader autograde : {result['serial_wall_s']:6.2f} s wall, "
            f"{result['serial_cpu_s_per_submission']:.3f} CPU s per submission\n"
            f"  normlab.course --jobs {result['jobs']:<3} : {result['parallel_wall_s']:6.2f} s "
            f"wall, {result['parallel_cpu_s_per_submission']:.3f} CPU s per submission\n"
            f"  speedup {result['speedup']:.2f}x; identical scores on all "
            f"{result['cells_compared']} cells: {result['identical_scores']}"
        )
    return 0 if result["identical_scores"] else 1


if __name__ == "__main__":
    sys.exit(main())
