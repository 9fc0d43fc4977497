"""Run one submitted notebook in a sandbox kernel, judging its check cells in the grader.

Cells run in order, as nbgrader would run them. A test cell made of check calls
(`normlab.grading.checkcell`) is not sent to the kernel: for each call the grader builds the
cases, has the kernel run each through `run_case` (one request per case, so the grader knows
which case every question belongs to), checks the `Result`s, adds the reference calls it saw
itself, and judges them here, where the student's code never ran. The cell's outputs are what
`check` would have shown in a kernel, plus what the student's code printed meanwhile (stderr
included, which nbgrader counts against the cell).

Every cell has a timeout (nbgrader's `Execute.timeout`), the notebook a budget; cells not run
score 0, and the record says why. A function a timeout stopped, or that crashed the kernel, is
stalled (`normlab_sandbox.kernel.Stalled`): every later check of it fails at once, so a
function that never returns costs one timeout, not one per check. A lost kernel is replaced
before the next cell (`kernel_session`). The record gives each test cell a `status` (passed,
failed, timed out, kernel died or not run) and its verdict's `category`; for a cell the kernel
could not finish, "timed out" or "crashed".
"""

from __future__ import annotations

import dataclasses
import time

from normlab.grading.catalog import GRADED
from normlab.grading.checkcell import CheckCall, is_check_cell, parse_test_cell
from normlab.grading.selfcheck import find_check
from normlab.grading.session import CheckerError, Session
from normlab.grading.verdict import CRASHED, NOT_WRITTEN, PASSED, TIMED_OUT
from normlab_sandbox import protocol

from . import outputs as out
from .answers import Answers
from .kernel_process import Interrupted, KernelDied
from .kernel_session import KernelSession


class NotRun(Exception):
    """A test cell the grader fails without running it; the message says why, `category` is
    its verdict's."""

    def __init__(self, message: str, category: str) -> None:
        super().__init__(message)
        self.category = category


def grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


class NotebookRun:
    """The run of one notebook in one kernel; `record` is what the report reads."""

    def __init__(self, kernel: KernelSession, session: Session, timeout: float, budget: float):
        """`session`: the notebook's grading `Session` (the course's policy, ps1's submitter's
        numbers); it keeps verdicts by the names checked, as `check` does in a kernel."""
        self.kernel, self.session, self.timeout, self.budget = kernel, session, timeout, budget
        self.assignment = session.assignment
        self.answers = Answers()
        self.record: dict = {"kernel": "ok", "reason": None, "cells": []}
        self.count = 0
        self.over: float = float("inf")  # the notebook's deadline, once it runs

    def run(self, nb) -> dict:
        self.over = time.monotonic() + self.budget
        self.session.cell_begins("")  # cells are told apart: verdicts are kept
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            cell.outputs = []
            cell.execution_count = None
            if not cell.source.strip():
                continue
            self._run_cell(index, cell)
        self.record.update(self.kernel.summary())
        return self.record

    def _run_cell(self, index: int, cell) -> None:
        test = is_check_cell(cell)
        parsed = parse_test_cell(cell.source)
        calls = parsed if test else None
        replacements = len(self.kernel.replaced)
        entry = {"index": index, "grade_id": grade_id(cell) if test else None}
        entry["where"] = "grader" if calls else "kernel"
        if time.monotonic() < self.over:
            self.kernel.renew(self.over)
        if parsed is None or len(self.kernel.replaced) != replacements:
            self.session.cell_begins("")  # the cell may change anything (a new kernel too)
        started = time.monotonic()
        stopped = self.kernel.dead or (started >= self.over and self._over_budget())
        if stopped:
            if test:
                cell.outputs = [out.error("KernelDied", f"not run: {stopped}")]
                category = CRASHED if self.kernel.dead else TIMED_OUT
                self._note(entry, "not run", category, stopped)
            return
        self.count += 1
        cell.execution_count = self.count
        deadline = min(started + self.timeout, self.over)
        category = None  # a check cell's verdict
        try:
            if calls:
                cell.outputs, category = self._check_cell(calls, deadline)
            else:
                test_cell = entry["grade_id"] if test else None
                request = protocol.RunCell(0, cell.source, test_cell)
                reply = self.kernel.request(request, deadline - started, self.answers)
                cell.outputs = out.sanitize(getattr(reply, "outputs", []))  # none: Failed
        except Interrupted:
            message = f"the cell ran longer than {self.timeout:g} s and was interrupted"
            if deadline == self.over:
                message = f"{self._over_budget()}: the cell was interrupted"
            cell.outputs = [*cell.outputs, out.error("CellTimeoutError", message)]
            self._note(entry, "timed out", TIMED_OUT, message, started)
            return
        except NotRun as skipped:  # stalled by an earlier timeout or crash
            ename = "CellTimeoutError" if skipped.category == TIMED_OUT else "KernelDied"
            cell.outputs = [*cell.outputs, out.error(ename, str(skipped))]
            self._note(entry, "not run", skipped.category, str(skipped), started)
            return
        except KernelDied as died:
            cell.outputs = [*cell.outputs, out.error("KernelDied", died.reason)]
            self._note(entry, "kernel died", CRASHED, died.reason, started)
            return
        if test:
            failed = out.scores_zero(cell.outputs)
            errors = [o for o in cell.outputs if o.output_type == "error"]
            message = f"{errors[0].ename}: {errors[0].evalue}" if errors else None
            if failed and not errors:
                message = "the cell wrote to stderr"
            status = "failed" if failed else "passed"
            category = cell_category(entry["grade_id"], failed, errors, category)
            self._note(entry, status, category, message, started)

    def _note(self, entry: dict, status: str, category: str, message, started=None) -> None:
        seconds = None if started is None else round(time.monotonic() - started, 3)
        entry.update(status=status, category=category, message=message, seconds=seconds)
        self.record["cells"].append(entry)

    def _over_budget(self) -> str:
        return f"the notebook used up its {self.budget:g} s budget"

    def _remaining(self, deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Interrupted  # the cell used up its timeout before the grader's next step
        return left

    def _check_cell(self, calls: list[CheckCall], deadline: float) -> tuple[list, str]:
        """Outputs of a test cell made of check calls, as `check` would leave them, and the
        category of its verdict (the first failing call's, else passed)."""
        shown: list = []
        for call in calls:
            failure = self._check_call(call, deadline, shown)
            if failure is not None:
                error, category = failure
                return [*shown, error], category
        return shown, PASSED

    def _check_call(self, call: CheckCall, deadline: float, shown: list):
        """Run one check call; None when it passes, else (the error output it raises, the
        verdict's category)."""
        try:
            spec = find_check(call.assignment or self.assignment, call.grade_id, len(call.names))
        except (KeyError, TypeError) as exc:  # the cell itself is wrong: a course bug
            return out.error(type(exc).__name__, str(exc)), CRASHED
        reply = self.kernel.request(
            protocol.AskNames(0, call.names), self._remaining(deadline), self.answers
        )
        answered = isinstance(reply, protocol.NamesDone)  # not Failed
        defined, stalled = (set(reply.defined), reply.stalled) if answered else (set(), {})
        for name in call.names:
            if name not in defined:
                return out.error("NameError", f"name {name!r} is not defined"), NOT_WRITTEN
        for name in call.names:
            if name in stalled:  # (category, message), checked: it came through the kernel
                category, why = stalled[name]
                if category not in (TIMED_OUT, CRASHED):
                    category, why = CRASHED, "a function of this notebook failed in an earlier cell"
                raise NotRun(f"not run: {why}", category)
        names = dict(zip(spec.targets, call.names, strict=True))
        try:
            verdict = self.session.judge(
                spec,
                lambda case: self._case_in_kernel(case, names, deadline, shown),
                hidden=call.hidden,
                seed=call.seed,
                kept=self.session.kept(call.names),
            )
        except CheckerError as exc:  # a checker bug scores 0, as in the kernel
            return out.error(type(exc.__cause__).__name__, str(exc)), CRASHED
        if verdict.passed:
            return None
        return out.error("AssertionError", verdict.failure_text(call.hidden)), verdict.category

    def _case_in_kernel(self, case, names: dict, deadline: float, shown: list):
        """Have the kernel run one case; the Result with the grader's own notes added."""
        self.answers.begin_case(case)
        try:
            owners = GRADED.get(self.assignment, ())
            reply = self.kernel.request(
                protocol.RunCase(0, case, names, owners), self._remaining(deadline), self.answers
            )
        finally:
            noted, handed_on, probes = self.answers.end_case()
        shown.extend(out.sanitize(getattr(reply, "outputs", [])))
        result = out.trusted_result(reply.result if isinstance(reply, protocol.CaseDone) else None)
        calls = result.reference_calls + tuple(c for c in noted if c not in result.reference_calls)
        handed_on = result.delegated + tuple(c for c in handed_on if c not in result.delegated)
        return dataclasses.replace(
            result, reference_calls=calls, delegated=handed_on, probes=probes
        )


def cell_category(grade_id: str, failed: bool, errors: list, verdict: str | None) -> str:
    """A test cell's category: its check's verdict, or the exception it raised in the kernel
    (an assertion: the cell's own misconception), or "crashed" (it wrote to stderr)."""
    if not failed:
        return PASSED
    if verdict not in (None, PASSED):
        return verdict
    if not errors:
        return CRASHED
    ename = errors[0].ename
    if ename == "AssertionError":
        return grade_id
    return NOT_WRITTEN if ename in ("NotImplementedError", "NameError") else CRASHED
