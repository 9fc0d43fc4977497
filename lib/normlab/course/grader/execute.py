"""`SandboxExecute`: nbgrader's Execute step, replaced by a run in a sandboxed kernel.

Everything else in `nbgrader autograde` stays nbgrader's own (restoring locked cells, checksums,
scoring from the outputs, late penalties); `autograde_preprocessors(config)` swaps this class in
for `Execute`, keeping any other step an instructor configured. As a subclass of `Execute`,
`c.Execute.timeout` applies unchanged; the whole notebook has a budget too (`notebook_budget`).
Each notebook's run is recorded (`notebook_record`) for the class report.
"""

from __future__ import annotations

import json
import time

from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute
from traitlets import Any, Float, Integer

from normlab.grading import REAL_TORCH, pools
from normlab.grading.session import Session

from ..plugins import NormlabGrading
from . import isolation as iso
from . import notebook_record
from .kernel_process import start_kernel
from .kernel_session import KernelSession
from .notebook import NotebookRun

NO_TIMEOUT_CAP_S = 600  # `Execute.timeout = None` still gets a bound
BUDGET_CELL_TIMEOUTS = 3  # the default notebook budget, in cell timeouts ...
MIN_BUDGET_S = 60.0  # ... and at least this


class SandboxExecute(Execute):
    """Run the notebook in a sandbox kernel; judge check cells in the grader."""

    notebook_budget = Float(
        None,
        allow_none=True,
        help="Seconds a whole notebook may take (default: 3 cell timeouts, at least 60 s)",
    ).tag(config=True)
    isolation = Any(None, help="The run's Isolation (set by the grading worker)").tag(config=True)
    slot = Integer(0, help="The grading worker's slot (set by the worker)").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        assignment, student, notebook = info["assignment"], info["student"], info["notebook"]
        coursedir = CourseDirectory(config=self.config)  # the records go under its root
        # no isolation set: nbgrader's own autograde, e.g. the formgrader's (hub/), gets what
        # `grade --isolation auto` chooses (strict, or a refusal that says why), for one kernel
        isolation = self.isolation or iso.choose(
            "auto", coursedir, self.config, 1, real_torch=assignment in REAL_TORCH
        )
        timeout = float(self.timeout) if self.timeout else NO_TIMEOUT_CAP_S
        budget = self.notebook_budget or max(BUDGET_CELL_TIMEOUTS * timeout, MIN_BUDGET_S)
        started = time.monotonic()
        folder = resources["metadata"]["path"]
        # ps1's variant is the submitter's: the student id is nbgrader's, not the STUDENT line's
        variant = pools.variant(assignment, student) if assignment in pools.POOLS else None
        policy = NormlabGrading(config=self.config).reuse_voids
        session = Session(assignment, policy, variant)
        kernel = KernelSession(
            lambda: start_kernel(isolation, self.slot, folder, student, variant), timeout
        )
        try:
            record = NotebookRun(kernel, session, timeout, budget).run(nb)
        finally:
            kernel.close()
        seconds = round(time.monotonic() - started, 3)
        record.update(
            student=student,
            assignment=assignment,
            notebook=notebook,
            variant=variant,
            isolation=isolation.mode,
            seconds=seconds,
            kernel_cpu_seconds=kernel.cpu_used,
            kernel_peak_mib=None if kernel.peak_memory is None else kernel.peak_memory >> 20,
        )
        path = notebook_record(coursedir.root, assignment, student, notebook)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1))
        # the formgrader's Autograde shows this line (issue 46): which grader, how isolated
        self.log.info(
            "%s: sandboxed grader, %s isolation, %.1f s", notebook, isolation.mode, seconds
        )
        return nb, resources


def autograde_preprocessors(config) -> list:
    """nbgrader's autograde steps (as configured) with `SandboxExecute` in place of Execute."""
    steps = config.Autograde.get("autograde_preprocessors")
    if steps is None:
        steps = Autograde.class_traits()["autograde_preprocessors"].default()
    names = (Execute, "nbgrader.preprocessors.Execute", "nbgrader.preprocessors.execute.Execute")
    swapped = [SandboxExecute if step in names else step for step in steps]
    if SandboxExecute not in swapped:
        raise SystemExit("the configured Autograde.autograde_preprocessors has no Execute step")
    return swapped
