"""A grading worker: nbgrader's own autograde, in-process, for one submission at a time.

Each worker is forked from the grader with nbgrader already imported and owns one grading slot
(its kernels' uid when root grades under strict isolation); it runs nbgrader's `Autograde`
converter as `nbgrader autograde <assignment> --student <id>` would, with `SandboxExecute` in
place of `Execute`. "database is locked" is retried; a submission nbgrader cannot grade at all
gets 0 on the notebooks not graded, as nbgrader does for a missing one, and the reason goes to
the run's record. `submitted/` is only read. nbgrader writes into a staging folder
(`staging_step`), moved into `autograded/` once the gradebook holds the scores, so a grader
killed at any moment leaves nothing half-written, and the next `grade` grades that submission
again.

Two costs nbgrader 0.9 pays again for every submission are paid once per worker
(`reuse_in_this_process`, after the fork: an engine must never cross one, its pooled
connections would be shared); nothing else of nbgrader changes:

- Every `Gradebook` creates a new SQLAlchemy engine, which keeps its compiled SQL statements:
  each submission compiled the same few hundred again (about 0.2 s of CPU). The worker keeps
  one engine per database URL; `Gradebook.close()` still disposes of its connections.
- Every cell's metadata is checked with `jsonschema.validate`, which first checks nbgrader's
  schema against JSON Schema's metaschema (about 0.2 s a submission). The worker checks the
  schema once, then validates with `jsonschema.validate`'s own steps: the same error raised.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import os
import random
import shutil
import time
import traceback
import types
import warnings

from jsonschema import exceptions, validators
from nbgrader import api
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.nbgraderformat import common
from sqlalchemy.exc import SAWarning

from . import cpu_seconds, forget_student, staging_step

LOCK_RETRIES = 8
_engine = functools.cache(api.create_engine)  # one engine per (URL, options)
_validators: dict[int, tuple] = {}  # id(schema): (schema, its validator)


def _validate(instance, schema) -> None:
    """`jsonschema.validate`, each schema checked once (nbgrader calls nothing else of it)."""
    found = _validators.get(id(schema))
    if found is None or found[0] is not schema:
        cls = validators.validator_for(schema)
        cls.check_schema(schema)
        found = _validators[id(schema)] = (schema, cls(schema))
    error = exceptions.best_match(found[1].iter_errors(instance))
    if error is not None:
        raise error


def reuse_in_this_process() -> None:
    """Keep nbgrader's engines and its checked schema for the rest of this process."""
    api.create_engine = _engine
    common.jsonschema = types.SimpleNamespace(validate=_validate)


@contextlib.contextmanager
def _captured_log(log):
    """nbgrader's log lines for one submission, kept for the record instead of printed."""
    buffer, saved = io.StringIO(), (list(log.handlers), log.propagate)
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    log.handlers, log.propagate = [handler], False
    try:
        yield buffer
    finally:
        log.handlers, log.propagate = saved


def _autograde_once(app, config, assignment: str, student: str) -> str | None:
    """Run nbgrader's converter into the staging folder; None on success, else the error."""
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id, coursedir.student_id = assignment, student
    coursedir.autograded_directory = staging_step(assignment)
    # force: over whatever an interrupted attempt left there; it logs to its parent's log
    converter = Autograde(coursedir=coursedir, config=config, parent=app, force=True)
    with _captured_log(app.log) as captured:
        try:
            converter.start()
        except Exception:  # noqa: BLE001 (nbgrader's own failures are reported, not raised)
            return captured.getvalue() + traceback.format_exc()
    errors = [line for line in captured.getvalue().splitlines() if line.startswith("[ERROR]")]
    return "\n".join(errors) or None


def zero_missing(db_url: str, folder: str, assignment: str, student: str) -> list[str]:
    """Give 0 to every cell of each notebook with no autograded copy (nbgrader's rule for a
    missing notebook); return their names."""
    zeroed = []
    with Gradebook(db_url) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            submission = gb.add_submission(assignment, student)
        for notebook in submission.notebooks:
            if os.path.exists(os.path.join(folder, f"{notebook.name}.ipynb")):
                continue
            for grade in notebook.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
            zeroed.append(notebook.name)
        gb.db.commit()
    return zeroed


def _publish(staged: str, folder: str) -> None:
    """Move the finished autograded copy `staged` to `folder`, the old one (a regrade's) out
    of the way first: one rename when both lie under the course root, as by default."""
    if os.path.exists(folder):
        shutil.rmtree(folder)  # killed now: no folder, so the next run grades it again
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    shutil.move(staged, folder)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(staged))  # the student's staging folder, now empty


def grade_one(app, config, assignment: str, student: str) -> dict:
    """Autograde one submission (`grade` has decided that it is to be graded, or regraded);
    the outcome as a plain dict for the run record."""
    started, cpu = time.monotonic(), cpu_seconds()
    forget_student(app.coursedir.root, assignment, student)
    coursedir = CourseDirectory(config=config)
    folder = coursedir.format_path(coursedir.autograded_directory, student, assignment)
    staged = coursedir.format_path(staging_step(assignment), student, assignment)
    for attempt in range(LOCK_RETRIES):
        error = _autograde_once(app, config, assignment, student)
        locked = error and ("database is locked" in error or "database table is locked" in error)
        if not locked:
            break
        time.sleep(0.2 * (attempt + 1) + random.random() * 0.3)
    outcome = {"student": student, "status": "graded", "reason": None}
    if error is None:
        _publish(staged, folder)
    else:
        forget_student(app.coursedir.root, assignment, student)
        shutil.rmtree(staged, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)  # as nbgrader leaves a submission it failed
        zeroed = zero_missing(coursedir.db_url, folder, assignment, student)
        outcome.update(status="failed", reason=error[-4000:], zeroed=zeroed)
    outcome.update(
        seconds=round(time.monotonic() - started, 3),
        worker_cpu_seconds=round(cpu_seconds() - cpu, 3),
    )
    return outcome


def worker_main(slot: int, app, config, isolation, assignment, tasks, results) -> None:
    """A worker process: grade students from `tasks` until None."""
    warnings.simplefilter("ignore", SAWarning)  # nbgrader's own session warnings, not ours
    reuse_in_this_process()  # here, after the fork: an engine is the process's
    config.SandboxExecute.isolation = isolation
    config.SandboxExecute.slot = slot
    while True:
        student = tasks.get()
        if student is None:
            return
        try:
            outcome = grade_one(app, config, assignment, student)
        except Exception:  # noqa: BLE001 (one submission's failure must not stop the run)
            outcome = {"student": student, "status": "failed", "reason": traceback.format_exc()}
        results.put(outcome)
