"""`grade`: autograde every submission of an assignment in parallel, with a progress bar.

Run from an nbgrader course root, like `nbgrader autograde`: submissions are found where
nbgrader looks, one already autograded is skipped unless `force`, and a `shard` grades only its
part of the class. `jobs` worker processes (`worker`) take submissions from a queue. The run's
record, one entry per student, is merged into `reports/<assignment>/grading-run.json` under a
lock, since graders of other shards may merge theirs at the same time.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import importlib
import json
import multiprocessing
import os
import re
import resource
import time
from dataclasses import dataclass

from tqdm import tqdm

from normlab.grading import REAL_TORCH

from . import cpu_seconds, run_record
from . import isolation as iso
from .nbgrader_app import grading_config, load_app, require_assignment
from .worker import worker_main

ISOLATION_LINES = {
    "strict": "grading {assignment} with strict isolation: each kernel in a bubblewrap sandbox",
    "basic": "grading {assignment} with basic isolation, as asked (--isolation basic): the "
    "kernels can read and write what this user can (see instructors/threat_model.md)",
}


@dataclass(frozen=True)
class Shard:
    """Part `index` of `count` (0 <= index < count) of a class (`--shard K/N`), so N hosts or
    processes share it. A student belongs to part `sha256(student id) mod N`, whatever the other
    students are and in whatever order they come, so N graders started with K = 0 .. N-1 (a Slurm
    job array's `SLURM_ARRAY_TASK_ID`, a Kubernetes indexed Job's `JOB_COMPLETION_INDEX`) grade
    every submission exactly once between them. K counts from 0, as both schedulers do."""

    index: int
    count: int

    def holds(self, student: str) -> bool:
        digest = hashlib.sha256(student.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """'K/N' -> Shard(K, N); a clear error for anything else."""
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not found:
        raise ValueError(f"--shard takes K/N, two whole numbers such as 0/4; got {text!r}")
    index, count = int(found[1]), int(found[2])
    if count < 1:
        raise ValueError(f"--shard {text}: N must be at least 1")
    if index >= count:
        raise ValueError(
            f"--shard {text}: K counts from 0, so it must be 0 to {count - 1} (as "
            f"SLURM_ARRAY_TASK_ID from --array=0-{count - 1}, or JOB_COMPLETION_INDEX)"
        )
    return Shard(index, count)


def _save_record(path, outcomes: list[dict], meta: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another shard's grader may be merging too
        kept = json.loads(path.read_text()).get("students", []) if path.exists() else []
        merged = {o["student"]: o for o in [*kept, *outcomes]}  # this run's outcome wins
        students = sorted(merged.values(), key=lambda o: o["student"])
        written = path.with_name(f"{path.name}.{os.getpid()}")
        written.write_text(json.dumps({**meta, "students": students}, indent=1))
        os.replace(written, path)


def grade(
    assignment: str,
    jobs: int = 2,
    force: bool = False,
    students: list[str] | None = None,
    isolation: str = "auto",
    limits: iso.Limits | None = None,
    uid_base: int = iso.DEFAULT_UID_BASE,
    progress: bool = True,
    shard: Shard | None = None,
) -> dict:
    """Autograde `assignment` (all submissions, `students`, or a `shard` of the class);
    return the run's summary."""
    app = load_app()
    coursedir = app.coursedir
    config = grading_config(app)
    require_assignment(config.CourseDirectory.db_url, assignment)
    pattern = coursedir.format_path(coursedir.submitted_directory, "*", assignment)
    prefix, suffix = pattern.split("*", 1)  # each student id with a submission, sorted
    folders = [path for path in glob.glob(pattern) if os.path.isdir(path)]
    found = sorted(path[len(prefix) : len(path) - len(suffix)] for path in folders)
    if students:
        missing = sorted(set(students) - set(found))
        if missing:
            raise SystemExit(f"no submission of {assignment} from: {', '.join(missing)}")
        found = [s for s in found if s in students]
    if shard is not None:
        found = [s for s in found if shard.holds(s)]
    todo, skipped = [], []
    for student in found:
        dest = coursedir.format_path(coursedir.autograded_directory, student, assignment)
        (skipped if os.path.exists(dest) and not force else todo).append(student)
    jobs = max(1, min(jobs, len(todo)))
    torch = assignment in REAL_TORCH
    chosen = iso.choose(isolation, coursedir, app.config, jobs, limits, uid_base, real_torch=torch)
    print(ISOLATION_LINES[chosen.mode].format(assignment=assignment), flush=True)
    if chosen.real_torch:  # once, here: the workers fork from this process
        importlib.import_module("normlab.answer_key.torch_layer_norms")  # the expectations' torch
        importlib.import_module("normlab_sandbox.module_probes").import_torchs_lazy_parts()
    started, cpu = time.monotonic(), cpu_seconds(resource.RUSAGE_CHILDREN)
    outcomes = _run_workers(app, config, chosen, assignment, todo, jobs, progress)
    summary = {
        "assignment": assignment,
        "shard": str(shard) if shard else None,
        "jobs": jobs,
        "isolation": chosen.mode,
        "isolation_asked": isolation,
        "graded": sum(o["status"] == "graded" for o in outcomes),
        "failed": sorted(o["student"] for o in outcomes if o["status"] == "failed"),
        "skipped": skipped,
        "seconds": round(time.monotonic() - started, 3),
        "cpu_seconds": round(cpu_seconds(resource.RUSAGE_CHILDREN) - cpu, 3),
    }
    _save_record(run_record(coursedir.root, assignment), outcomes, summary)
    return summary


def _run_workers(app, config, chosen, assignment, todo, jobs, progress) -> list[dict]:
    if not todo:
        return []
    context = multiprocessing.get_context("fork")
    tasks, results = context.Queue(), context.Queue()
    for student in [*todo, *[None] * jobs]:  # then one None per worker: stop
        tasks.put(student)
    workers = [
        context.Process(
            target=worker_main,
            args=(slot, app, config, chosen, assignment, tasks, results),
            name=f"grader-{slot}",
        )
        for slot in range(jobs)
    ]
    for worker in workers:
        worker.start()
    outcomes = []
    bar = tqdm(total=len(todo), desc=f"autograde {assignment}", unit="sub", disable=not progress)
    try:
        while len(outcomes) < len(todo):
            try:
                outcome = results.get(timeout=5.0)
            except Exception:  # noqa: BLE001 (queue.Empty: check the workers are alive)
                if not any(w.is_alive() for w in workers):
                    break
                continue
            outcomes.append(outcome)
            failed = sum(o["status"] == "failed" for o in outcomes)
            # the label first, then the step that redraws the bar: it names this student
            bar.set_postfix(student=outcome["student"], failed=failed, refresh=False)
            bar.update(1)
    finally:
        bar.close()
        for worker in workers:
            worker.join(timeout=30)
            if worker.is_alive():
                worker.terminate()
                worker.join()
    lost = sorted(set(todo) - {o["student"] for o in outcomes})
    died = "a grading worker died"
    outcomes += [{"student": s, "status": "failed", "reason": died} for s in lost]
    return outcomes
