"""Grading throughput: serial `nbgrader autograde` against `python -m normlab.course grade`.

    python -m normlab.course.bench                    # 12 ps2 submissions, --jobs = CPUs
    python -m normlab.course.bench --size 24 --jobs 4 --repeat 3 --json

Run it in a checkout of the course: it builds a demo course from the checkout
(`tests/demo_course.py`: the course's own config and ps2 source, a class with one
misconception per student, some correct), copies it, and in the same run times both commands
from the same fresh state, each as a whole command (start-up included), `repeat` times in
alternation so that a busy machine slows both alike.
Reports the median wall time of each, their ratio, CPU seconds per submission (the command and
every process under it), and whether every student's every cell got the same score in both
gradebooks. It is a measurement, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import importlib.util
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

import normlab

from .records import assignment_folder, run_record

PS2 = "ps2_layer_norm"
DEMO = Path("tests") / "demo_course.py"


def load_demo(checkout: Path | None = None):
    """The checkout's demo-course module (`tests/demo_course.py`): the one given, else the
    current directory, else the checkout normlab is installed from (editable)."""
    candidates = [checkout] if checkout else [Path.cwd(), Path(normlab.__file__).parents[2]]
    for folder in candidates:
        path = Path(folder).resolve() / DEMO
        if path.is_file():
            spec = importlib.util.spec_from_file_location("demo_course", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise SystemExit(f"no {DEMO} here: run the bench in a checkout of the course (or --checkout)")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its descendants)."""
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return wall, _children_cpu() - cpu


def sandboxed_cpu(course: Path, isolation: str) -> float:
    """CPU seconds of a strict run's kernels, from its grading records: a kernel in bubblewrap
    is not a waited-for descendant of the command, so the command's own count misses it."""
    if isolation != "strict":
        return 0.0  # basic kernels are the workers' children: already counted
    records = assignment_folder(course, PS2).glob("records/*/*.json")
    return sum(json.loads(path.read_text()).get("kernel_cpu_seconds") or 0.0 for path in records)


def scores(course: Path, assignment: str = PS2) -> dict[tuple[str, str], float | None]:
    """{(student, grade_id): auto_score} from a course's gradebook."""
    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for submission in gb.assignment_submissions(assignment):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    found[(submission.student.id, grade.name)] = grade.auto_score
    return found


def run(size: int, jobs: int, repeat: int, demo) -> dict:
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        template = demo.build_course(Path(tmp) / "template")
        demo.demo_class(template, size)
        serial_cmd = [*demo.nbgrader_command(), "autograde", PS2]
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
                wall, cpu = timed(command, course, demo.course_env())
                if kind == "parallel":
                    isolation = json.loads(run_record(course, PS2).read_text())["isolation"]
                    cpu += sandboxed_cpu(course, isolation)
                rows[kind].append((wall, cpu))
                courses[kind] = course
            same &= scores(courses["serial"]) == scores(courses["parallel"])
            graded = scores(courses["parallel"])
    serial_wall = statistics.median(w for w, _ in rows["serial"])
    parallel_wall = statistics.median(w for w, _ in rows["parallel"])
    return {
        "submissions": size,
        "jobs": jobs,
        "cpus": os.cpu_count(),
        "isolation": isolation,
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
    parser.add_argument("--checkout", type=Path, help="the course checkout (default: here)")
    args = parser.parse_args(argv)
    result = run(args.size, args.jobs, args.repeat, load_demo(args.checkout))
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(
            f"{result['submissions']} ps2 submissions, {result['cpus']} CPUs, "
            f"median of {result['repeat']}:\n"
            f"  serial nbgrader autograde : {result['serial_wall_s']:6.2f} s wall, "
            f"{result['serial_cpu_s_per_submission']:.3f} CPU s per submission\n"
            f"  normlab.course --jobs {result['jobs']:<3} : {result['parallel_wall_s']:6.2f} s "
            f"wall, {result['parallel_cpu_s_per_submission']:.3f} CPU s per submission "
            f"({result['isolation']} isolation)\n"
            f"  speedup {result['speedup']:.2f}x; identical scores on all "
            f"{result['cells_compared']} cells: {result['identical_scores']}"
        )
    return 0 if result["identical_scores"] else 1


if __name__ == "__main__":
    sys.exit(main())
