"""Grading throughput: serial `nbgrader autograde` against `python -m normlab.course grade`;
and the grader's CPU while a student's function loops.

    python scripts/grading_bench.py                    # 12 ps2 submissions, --jobs = CPUs
    python scripts/grading_bench.py --size 24 --jobs 4 --repeat 3 --json
    python scripts/grading_bench.py --loop 60          # a 60 s loop: the grader's CPU meanwhile

It runs in the checkout it lives in (`make install` first): it builds a demo course from it
(`tests/demo_course.py`: the course's own config and ps2 source, a class with one
misconception per student, some correct), copies it, and in the same run times both commands
from the same fresh state, each as a whole command (start-up included), `repeat` times in
alternation so that a busy machine slows both alike.
Reports the median wall time of each, their ratio, CPU seconds per submission (the command and
every process under it), and whether every student's every cell got the same score in both
gradebooks. With `--loop SECONDS` it grades, with that cell timeout, a submission whose
row_stats loops calling `x.var` and `np.mean` next to its twin whose row_stats raises at once,
and reports the grading worker's CPU that the loop cost (the difference between the two) as a
share of the loop's wall time, and both scores. It is a measurement, not a test: nothing here
asserts a speed.
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

from normlab.course.grader import assignment_folder, notebook_record, run_record

PS2 = "ps2_layer_norm"
DEMO = Path("tests") / "demo_course.py"
LOOPING_ROW_STATS = (
    "def row_stats(x):\n"
    "    x = np.asarray(x, dtype=np.float64)\n"
    "    while True:\n"
    "        mean, var = np.mean(x, axis=-1), x.var(axis=-1)\n"
)
RAISING_ROW_STATS = "def row_stats(x):\n    raise NotImplementedError()\n"


CHECKOUT = Path(__file__).resolve().parents[1]


def load_demo(checkout: Path = CHECKOUT):
    """The checkout's demo-course module (`tests/demo_course.py`)."""
    path = Path(checkout).resolve() / DEMO
    if not path.is_file():
        raise SystemExit(f"no {DEMO} in {checkout}: run the bench from a checkout of the course")
    spec = importlib.util.spec_from_file_location("demo_course", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def grade_command(jobs: int, isolation: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "normlab.course",
        "grade",
        PS2,
        "--jobs",
        str(jobs),
        "--isolation",
        isolation,
        "--no-progress",
    ]


def loop(seconds: float, isolation: str, demo) -> dict:
    """The grading worker's CPU while a student's row_stats loops for `seconds` (see the
    module docstring)."""
    with tempfile.TemporaryDirectory(prefix="grading-loop-") as tmp:
        extra = f"c.Execute.timeout = {seconds}\n"
        course = demo.build_course(Path(tmp) / "course", config_extra=extra)
        twins = {"looping": LOOPING_ROW_STATS, "raising": RAISING_ROW_STATS}
        for student, row_stats in twins.items():
            answers = {"row_stats_answer": row_stats, "layer_norm_answer": demo.LAYER_NORM}
            demo.submit(course, student, answers)
        timed(grade_command(1, isolation), course, demo.course_env())
        runs = json.loads(run_record(course, PS2).read_text())
        record = json.loads(notebook_record(course, PS2, "looping", PS2).read_text())
        graded = scores(course)
    worker = {s["student"]: s for s in runs["students"]}
    looped = sum(c["seconds"] for c in record["cells"] if c["status"] == "timed out")
    cpu = worker["looping"]["worker_cpu_seconds"] - worker["raising"]["worker_cpu_seconds"]
    total = {s: sum(v or 0 for (who, _), v in graded.items() if who == s) for s in twins}
    return {
        "isolation": runs["isolation"],
        "loop_wall_s": round(looped, 2),
        "grader_cpu_s": round(cpu, 3),
        "grader_cpu_share": round(cpu / looped, 4) if looped else None,
        "looping_submission_s": worker["looping"]["seconds"],
        "looping_score": total["looping"],
        "raising_score": total["raising"],
    }


def run(size: int, jobs: int, repeat: int, demo, isolation: str = "auto") -> dict:
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        template = demo.build_course(Path(tmp) / "template")
        demo.demo_class(template, size)
        serial_cmd = [*demo.nbgrader_command(), "autograde", PS2]
        parallel_cmd = grade_command(jobs, isolation)
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
    parser.add_argument("--checkout", type=Path, default=CHECKOUT, help="the course checkout")
    parser.add_argument("--isolation", default="auto", choices=["auto", "strict", "basic"])
    parser.add_argument(
        "--loop", type=float, metavar="SECONDS", help="measure the grader's CPU during a loop"
    )
    args = parser.parse_args(argv)
    if args.loop:
        found = loop(args.loop, args.isolation, load_demo(args.checkout))
        print(json.dumps(found, indent=1) if args.json else _loop_text(found))
        return 0
    result = run(args.size, args.jobs, args.repeat, load_demo(args.checkout), args.isolation)
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


def _loop_text(found: dict) -> str:
    return (
        f"a student's row_stats loops {found['loop_wall_s']:.1f} s calling x.var and np.mean "
        f"({found['isolation']} isolation):\n"
        f"  the grading worker's CPU meanwhile: {found['grader_cpu_s']:.2f} s "
        f"({100 * found['grader_cpu_share']:.1f}% of the loop's wall time)\n"
        f"  the looping submission: {found['looping_submission_s']:.1f} s, "
        f"{found['looping_score']:g}/25 (its twin whose row_stats raises: "
        f"{found['raising_score']:g}/25)"
    )


if __name__ == "__main__":
    sys.exit(main())
