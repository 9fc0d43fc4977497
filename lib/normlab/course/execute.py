"""`SandboxExecute`: nbgrader's Execute step, replaced by a run in a jailed sandbox kernel.

Everything else in `nbgrader autograde` stays nbgrader's own: restoring locked and deleted
test cells from the gradebook, checksums, output limits, `SaveAutoGrades`' scoring from the
outputs, late penalties. `autograde_preprocessors(config)` swaps this class in for `Execute`,
keeping any other step an instructor configured.

It subclasses nbgrader's `Execute` so that `c.Execute.timeout` in `nbgrader_config.py` applies
unchanged (a cell past it is interrupted, as with `interrupt_on_timeout`; the kernel options,
`extra_arguments` and `execute_retries`, mean nothing to a forked sandbox kernel). The worker
that runs nbgrader in-process sets `SESSION` (its zygote, the isolation, its slot and the
course root) before converting a submission. For each notebook it writes a record (see
`records`): the isolation used, whether the kernel died and why, and each test cell's status,
message and seconds.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass

from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute

from .isolation import Isolation
from .notebook import NotebookRun
from .records import notebook_record
from .sandbox import Zygote

NO_TIMEOUT_CAP_S = 600  # `Execute.timeout = None` still gets a bound


@dataclass
class Session:
    """What a grading worker lends to `SandboxExecute`."""

    zygote: Zygote
    isolation: Isolation
    slot: int
    root: str  # the course root, where the records go


SESSION: Session | None = None


def _spawn(spec: dict):
    """A kernel from the worker's zygote; a zygote that died is replaced once."""
    try:
        return SESSION.zygote.spawn(spec)
    except (RuntimeError, OSError):
        SESSION.zygote.close()
        SESSION.zygote = Zygote()
        return SESSION.zygote.spawn(spec)


class SandboxExecute(Execute):
    """Run the notebook in a sandbox kernel; judge check cells in the grader."""

    def preprocess(self, nb, resources):
        if SESSION is None:
            raise RuntimeError("SandboxExecute runs inside `python -m normlab.course grade`")
        info = resources["nbgrader"]
        folder = resources["metadata"]["path"]
        timeout = float(self.timeout) if self.timeout else NO_TIMEOUT_CAP_S
        workdir = None
        if SESSION.isolation.mode == "basic":
            workdir = tempfile.mkdtemp(prefix="normlab-kernel-")
        started = time.monotonic()
        kernel = _spawn(SESSION.isolation.spec(SESSION.slot, folder, workdir))
        try:
            record = NotebookRun(kernel, info["assignment"], timeout).run(nb)
        finally:
            kernel.close()
            if workdir:
                shutil.rmtree(workdir, ignore_errors=True)
        record.update(
            student=info["student"],
            assignment=info["assignment"],
            notebook=info["notebook"],
            isolation=SESSION.isolation.mode,
            seconds=round(time.monotonic() - started, 3),
        )
        path = notebook_record(SESSION.root, info["assignment"], info["student"], info["notebook"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1))
        return nb, resources


def autograde_preprocessors(config) -> list:
    """nbgrader's autograde steps (as configured) with `SandboxExecute` in place of Execute."""
    section = config["Autograde"] if "Autograde" in config else {}
    if "autograde_preprocessors" in section:
        steps = section["autograde_preprocessors"]
    else:
        steps = Autograde.class_traits()["autograde_preprocessors"].default()
    names = (Execute, "nbgrader.preprocessors.Execute", "nbgrader.preprocessors.execute.Execute")
    swapped = [SandboxExecute if step in names else step for step in steps]
    if SandboxExecute not in swapped:
        raise SystemExit("the configured Autograde.autograde_preprocessors has no Execute step")
    return swapped
