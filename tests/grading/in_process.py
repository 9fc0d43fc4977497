"""A whole notebook run in this process, every cell in order, as a kernel runs it: the cheap layer
that proves, for every mutant, what plain nbgrader and Restart and Run All would show.

`run_cells(nb, grading=...)` executes each code cell (test cells and the summary included) in
one namespace, saying where each begins as IPython does (the notebook's session's
`cell_begins`: the verdicts `check` keeps), and records, per cell, what a kernel would send:
its stdout, its stderr (text written there and each warning Python shows by default, as a
kernel prints them there), the error it raised and the value of its last expression (a kernel's
execute_result, which nbgrader reads as partial credit). `grading=True` is nbgrader's
autograde: NBGRADER_EXECUTION is set, so a failing check raises. `grading=False` is a
student's kernel: a visible check prints its line, ✓ or ✗, and only a hidden battery (which
only a graded notebook holds) raises. Either way the run goes on after an error, as nbgrader's
allow_errors: a caller that wants Run All's "the first error is fatal" asserts which cells
raised. The run keeps the notebook's grading session (`selfcheck.SESSION`), whose log holds
the verdict of every check call: what the cells concluded, read without judging again.

`graded(nb)` is the notebook nbgrader grades: the submission's cells with the source's test
cells (hidden tests back, as autograde's overwrite of locked cells puts them). `scores(cells)`
is then nbgrader's rule: a test cell that raised, wrote to stderr or left a value scores 0.

What a real kernel adds (a fresh interpreter, IPython's display, nbgrader's own bookkeeping) is
proven on the kernel witnesses (mutants.KERNEL_WITNESSES) by test_nbgrader.py and
test_run_all.py, which compare the same assertions on real kernels.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import warnings
from dataclasses import dataclass, field

import nbformat
from course_helpers import as_student, nbgrader_meta, read, source_path

from normlab.grading import selfcheck
from normlab.grading.checkcell import is_check_cell
from normlab.grading.session import Session
from normlab.grading.verdict import Verdict

# the warnings a fresh Python does not show (its default filters)
_HIDDEN_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


@dataclass
class CellRun:
    grade_id: str | None
    stdout: str
    stderr: str
    error: BaseException | None
    value: object = None


@dataclass
class NotebookRun:
    """A notebook's run: what each code cell sent, and its grading session (None when the setup
    cell never made one), whose `log` is every check call's (spec, hidden, Verdict)."""

    cells: list[CellRun] = field(default_factory=list)
    session: Session | None = None

    def verdicts(self) -> dict[str, dict[str, Verdict]]:
        """battery ("visible", "hidden") -> grade_id -> the Verdict of its check call, read from
        the session's log (a notebook's test cells call each check once per battery)."""
        found: dict[str, dict[str, Verdict]] = {"visible": {}, "hidden": {}}
        for spec, hidden, verdict in self.session.log if self.session else ():
            battery = found["hidden" if hidden else "visible"]
            assert spec.grade_id not in battery, f"{spec.grade_id} judged twice"
            battery[spec.grade_id] = verdict
        return found


def graded(nb, assignment: str):
    """The notebook nbgrader autogrades: `nb`'s cells, its test cells the source's."""
    nb = nbformat.from_dict(nb)  # deep copy
    source = read(source_path(assignment))
    tests = {nbgrader_meta(c)["grade_id"]: c.source for c in source.cells if is_check_cell(c)}
    for cell in nb.cells:
        if is_check_cell(cell):
            cell.source = tests[nbgrader_meta(cell)["grade_id"]]
    return nb


def run_cells(nb, *, grading: bool, student: str | None = None) -> NotebookRun:
    """Every code cell of `nb` run in order in one namespace (see the module's docstring),
    ps1's STUDENT line naming `student` when given (as nbgrader names the submitter)."""
    namespace: dict = {"__name__": "__main__"}
    run = NotebookRun()
    saved = os.environ.get("NBGRADER_EXECUTION")
    if grading:
        os.environ["NBGRADER_EXECUTION"] = "autograde"
    else:
        os.environ.pop("NBGRADER_EXECUTION", None)
    try:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            source = as_student(cell.source, student) if student else cell.source
            session = namespace.get(selfcheck.SESSION)
            if session is not None:  # as IPython's pre_run_cell event says it
                session.cell_begins(source)
            ran = _run_cell(source, namespace)
            ran.grade_id = nbgrader_meta(cell).get("grade_id")
            run.cells.append(ran)
    finally:
        run.session = namespace.get(selfcheck.SESSION)
        if run.session is not None:
            run.session.cells_end()
        if saved is None:
            os.environ.pop("NBGRADER_EXECUTION", None)
        else:
            os.environ["NBGRADER_EXECUTION"] = saved
    return run


def _run_cell(source: str, namespace: dict) -> CellRun:
    out, err = io.StringIO(), io.StringIO()
    error, value = None, None
    with warnings.catch_warnings(record=True) as shown:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for category in _HIDDEN_BY_DEFAULT:
            warnings.filterwarnings("ignore", category=category)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                value = _exec_like_a_kernel(source, namespace)
            except Exception as exc:  # noqa: BLE001 - a cell's error is what the run records
                error = exc
    stderr = err.getvalue() + "".join(f"{w.category.__name__}: {w.message}\n" for w in shown)
    return CellRun(None, out.getvalue(), stderr, error, value)


def _exec_like_a_kernel(source: str, namespace: dict):
    """Run a cell; return its last expression's value (None when it ends in a statement)."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), namespace)  # noqa: S102 - a notebook cell
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)  # noqa: S307


def scores(cells: list[CellRun], points: dict[str, float]) -> dict[str, float]:
    """grade_id -> score of each autograded cell, by nbgrader's rule: 0 for a cell that raised
    or wrote to stderr, else its points. A cell whose last expression has a value (which
    nbgrader would read as partial credit) scores 0 here too: `check` returns None."""
    found = {}
    for cell in cells:
        if cell.grade_id in points:
            failed = cell.error is not None or cell.stderr or cell.value is not None
            found[cell.grade_id] = 0.0 if failed else points[cell.grade_id]
    return found
