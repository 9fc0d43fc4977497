"""What a notebook calls in the student's kernel: `use_assignment`, `check`, `try_it`, `summary`.

    use_assignment("ps2_layer_norm")          # once, in the notebook's locked setup cell
    r, d_model = my_variant()                 # ps1: the student's own numbers (`pools`)
    try_it(layer_norm, x, gamma, beta)        # a "try it" cell: the output, or the error shown
    check("axis", layer_norm)                 # a test cell: the visible battery
    check("axis", layer_norm, hidden=True)    # the same cell's hidden battery (autograde only)
    summary(globals())                        # the notebook's last cell

`check` builds the cases, runs them in-process under guards (`run_case`) and judges them.
A visible check that passes prints one line to stdout, a tick, its grade_id, what it checks
(the CheckSpec's summary) and its points, "✓ <grade_id>: <summary> (<points> points)"; a
hidden one prints nothing. A check that fails raises AssertionError with the judge's message
while nbgrader grades (it sets NBGRADER_EXECUTION in the kernel's environment, to
"autograde" or "validate") and always for the hidden battery, which only a graded notebook
holds: the cell then scores 0. In a student's own kernel it prints the same message under a
cross, "✗ <grade_id>: <summary> (<points> points)", and returns, so that "Restart Kernel and
Run All Cells" reaches every check and the summary in any front end. Every output is on
stdout and `check` returns None: nbgrader reads a test cell's execute_result as partial
credit, and zeroes a cell that writes to stderr.
`try_it` calls the student's function in a "try it" cell and shows what it returns, or the
error it raised (on stdout), without stopping the notebook.
`summary` re-runs every visible check on the notebook's namespace and prints how many
pass, the points they cover and the points the failing ones lose, and the cells graded by
hand; it never raises.

While cells that are only check calls run one after the other (a notebook's test cells), a
battery is judged once: `check` keeps its verdicts, by the objects checked, until a cell that is
anything else begins (`cell_begins`: IPython's pre_run_cell event in a notebook's kernel,
which `use_assignment` registers; no cell is told apart elsewhere, and then nothing is kept).
The sandboxed grader keeps them by the same rule (`normlab.course.grader.notebook`).

`find_check` (lookup and arity) and `run_check` (cases, runs, judge: a `Verdict`) are the
resolution `check` shares with the sandboxed grader (`normlab.course`), which runs the cases
in another process. Both judge with the installed oracle, `recording.ORACLE`: the live one
(`normlab.grading.oracle`), or in a student download its replay of recorded expectations;
`run_check` takes another as `oracle=`.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from dataclasses import replace
from functools import partial

from normlab_sandbox import student_variant

from . import pools
from .catalog import CHECKS, GRADED, MANUAL, REAL_TORCH, cells_of, reuse_cell
from .checkcell import parse_test_cell
from .normchecks.reference_reuse import hands_over
from .oracle import DeclaredOracle
from .recording import ORACLE
from .runner import run_case
from .spec import DEFAULT_SEED, CheckSpec
from .verdict import CRASHED, NOT_JUDGED, NOT_WRITTEN, Verdict

_current: dict[str, str] = {}
# the verdicts `check` keeps while test cells run one after the other, by the identities of the
# objects checked: {ids: (objects, {battery: Verdict})}; None where cells are not told apart
_kept: dict | None = None


REUSE_VOIDS = ("function", "cell")  # the course's reuse policies (nbgrader_config.py)


def use_assignment(assignment: str, reuse_voids: str = "function", student: str = "") -> None:
    """Say which assignment's checks `check` runs (the notebook's setup cell calls this), and
    the course's reuse policy: "function" (a function that hands its work to a library
    earns nothing: every cell of it scores 0) or "cell" (its reuse cell alone); `make
    release` writes the course's into the setup cell. An assignment with a pool of
    per-student variants (ps1) takes the notebook's STUDENT too (`pools.student_id`: while
    nbgrader grades, the submitter's id wins). An assignment that grades torch code (ps8)
    raises ModuleNotFoundError, saying how to install torch, in a Python without it: the
    other problem sets run without torch."""
    if assignment not in CHECKS:
        raise KeyError(f"unknown assignment {assignment!r}; expected one of {', '.join(CHECKS)}")
    if reuse_voids not in REUSE_VOIDS:
        raise ValueError(f"reuse_voids must be one of {REUSE_VOIDS}; got {reuse_voids!r}")
    _current.clear()
    _current["assignment"] = assignment
    _current["reuse_voids"] = reuse_voids
    if assignment in pools.POOLS:
        found, how = pools.student_id(student.strip())
        _current.update(student=found, how=how, claimed=student.strip())
        _current["variant"] = pools.variant(assignment, found) if found else None
    _track_cells()
    if assignment in REAL_TORCH and importlib.util.find_spec("torch") is None:
        raise ModuleNotFoundError(
            f"{assignment} needs torch, which this Python does not have. Install its CPU "
            f"build, in a cell: %pip install torch --index-url {TORCH_CPU_INDEX} (Exercises > "
            f"Getting started on the course's site says more), then restart the kernel and "
            f"run the notebook again.",
            name="torch",
        )


TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def cell_begins(source: str) -> None:
    """A cell of `source` is about to run. Unless it is only check calls (a test cell), the
    verdicts `check` kept are dropped: that cell may define, change or delete anything. The
    first call starts keeping them (a runner that says where its cells begin)."""
    global _kept
    if _kept is None or parse_test_cell(source) is None:
        _kept = {}


def cells_end() -> None:
    """A runner that said where its cells begin ran its last: nothing is kept any more."""
    global _kept
    _kept = None


def _on_cell(info) -> None:
    cell_begins(info.raw_cell)


def _track_cells() -> None:
    """In an IPython kernel, have each cell say it begins (`cell_begins`), once."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and _on_cell not in shell.events.callbacks["pre_run_cell"]:
        shell.events.register("pre_run_cell", _on_cell)


def kept_for(*objects) -> dict | None:
    """The verdicts kept for a check of these objects (`run_check`'s `kept`), or None when
    cells are not told apart here."""
    if _kept is None:
        return None
    return _kept.setdefault(tuple(map(id, objects)), (objects, {}))[1]  # objects: ids stay theirs


def my_variant():
    """The student's own numbers for the assignment (ps1): (r, d_model), shown; (None, None)
    after asking for the student's id when it is not known (the notebook runs on)."""
    return student_variant.my_variant(_current)


def find_check(assignment: str, grade_id: str, count: int) -> CheckSpec:
    """The CheckSpec of grade cell `grade_id` of `assignment`, called with `count` targets.

    KeyError when there is no such cell, TypeError when `count` is not its number of targets.
    """
    spec = CHECKS.get(assignment, {}).get(grade_id)
    if spec is None:
        raise KeyError(grade_id)
    if count != len(spec.targets):
        raise TypeError(
            f"check({grade_id!r}) reads {len(spec.targets)} value(s), "
            f"{', '.join(spec.targets)}; got {count}"
        )
    return spec


class CheckerError(Exception):
    """The check itself failed, building its cases or judging (a bug in the course, which
    scores the cell 0); the original exception is its __cause__."""


def judge_battery(
    spec: CheckSpec,
    run_one,
    *,
    hidden: bool = False,
    seed: int = DEFAULT_SEED,
    oracle=ORACLE,
    variant: dict | None = None,
) -> Verdict:
    """The judge's `Verdict` on one battery of `spec`, alone; run_one(case) -> Result runs
    each case wherever the student's code lives (its exceptions pass through); expectations
    come from `oracle`, held to the questions the check declares for these cases
    (`oracle.DeclaredOracle`); a check with per-student variants (`spec.varies`) runs on
    `variant`'s battery, and without one asks for the student's id."""
    if spec.varies and variant is None:
        return Verdict(NOT_WRITTEN, f"not checked yet: {student_variant.ASK}")
    try:
        own = {"variant": variant} if spec.varies else {}
        cases = spec.make_cases(seed, hidden=hidden, **own)
        declared = DeclaredOracle(oracle, [q for case in cases for q in spec.questions(case)])
    except Exception as exc:
        raise CheckerError(f"the check could not build its cases: {exc}") from exc
    results = [run_one(case) for case in cases]
    try:
        return spec.judge(cases, results, declared)
    except Exception as exc:
        raise CheckerError(f"the check could not judge: {exc}") from exc


def run_check(
    spec: CheckSpec,
    run_one,
    *,
    hidden: bool = False,
    seed: int = DEFAULT_SEED,
    oracle=ORACLE,
    reuse_voids: str | None = None,
    variant: dict | None = None,
    kept: dict | None = None,
) -> Verdict:
    """The `Verdict` of one battery of `spec`, with the course's rules across cells (`variant`:
    the student's own numbers, for an assignment with a pool; by default the notebook's;
    `kept`: the verdicts of batteries already judged on the same objects since the last cell
    that was not only check calls, which this judging reads and adds to):

    - reuse voids a function's own work (policy "function", the default; `reuse_voids` or
      the notebook's `use_assignment`): each cell of a function first runs its reuse cell's
      battery, and if the function hands its work to a library the cell is not judged and
      keeps no points (in any order the cells run, in any grader); the reuse cell says which
      call, and that every cell of the function scores 0;
    - one cause is said once: a failure whose cause is the function's (it raised, returns
      another shape, lacks an attribute) is said in full by the first cell of the function
      that shows it, in the notebook's order, and "same cause as <cell>" by the others.
    """
    policy = reuse_voids or _current.get("reuse_voids", REUSE_VOIDS[0])
    if variant is None and spec.assignment in pools.POOLS:
        variant = _current.get("variant")
    judged = partial(
        judge_battery, run_one=run_one, hidden=hidden, seed=seed, oracle=oracle, variant=variant
    )

    def judge(battery: CheckSpec) -> Verdict:
        if kept is None:
            return judged(battery)
        found = (battery.assignment, battery.grade_id, hidden, seed)
        if found not in kept:
            kept[found] = judged(battery)
        return kept[found]

    reuse = reuse_cell(spec)
    if reuse is not None and policy == "function":
        found = judge(reuse)
        if _hands_over(reuse, found):
            return Verdict(
                NOT_JUDGED,
                f"not judged: {spec.targets[0]} hands the work to {found.cause}; "
                f"see {reuse.grade_id}.",
            )
    verdict = judge(spec)
    if spec.voids and _hands_over(spec, verdict):
        return replace(verdict, message=f"{verdict.message} {_POLICY[policy](spec)}")
    if not verdict.passed and verdict.cause:
        for earlier in cells_of(spec):
            if earlier is spec:
                break
            if judge(earlier).cause == verdict.cause:
                message = f"same cause as {earlier.grade_id}: {verdict.cause}"
                return replace(verdict, message=message)
    return verdict


def _hands_over(reuse: CheckSpec, verdict: Verdict) -> bool:
    """Does a reuse cell's verdict find that its function hands its work to a library?"""
    return (
        verdict.category == reuse.category
        and verdict.cause is not None
        and (hands_over(verdict.message))
    )


_POLICY = {
    "function": lambda spec: (
        f"Handing the work to a library earns {spec.targets[0]} nothing: every cell of it scores 0."
    ),
    "cell": lambda spec: "This cell scores 0; the other cells still grade your numbers.",
}


def points(value: float) -> str:
    """'1 point', '3 points'."""
    return f"{value:g} point{'' if value == 1 else 's'}"


def check_line(spec: CheckSpec, mark: str, note: str | None = None) -> str:
    """One check's line, "<mark> <grade_id>: <summary>[, <note>] (<points>)"; mark ✓ or ✗,
    the note a pass's qualification ("apart from the variance: see population_variance")."""
    said = f"{spec.summary}, {note}" if note else spec.summary
    return f"{mark} {spec.grade_id}: {said} ({points(spec.points)})"


def passed_line(spec: CheckSpec, note: str | None = None) -> str:
    """What a passing visible check prints."""
    return check_line(spec, "✓", note)


def failed_text(spec: CheckSpec, message: str) -> str:
    """What a failing check prints in a student's kernel: the check's line under a cross, then
    the judge's message."""
    return f"{check_line(spec, '✗')}\n  {message}"


def graded_now() -> bool:
    """Is nbgrader grading this kernel (autograde or validate)? It sets NBGRADER_EXECUTION in the
    environment of the kernels it starts (nbgrader 0.9: converters/autograde.py, validator.py)."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))


def _chosen() -> str:
    name = _current.get("assignment")
    if name is None:
        raise RuntimeError(
            "no assignment chosen: run the notebook's first code cell (use_assignment(...))"
        )
    return name


def check(
    grade_id: str,
    *targets,
    hidden: bool = False,
    assignment: str | None = None,
    seed: int = DEFAULT_SEED,
) -> None:
    """Run grade cell `grade_id`'s check on `targets`. On a failure: raise AssertionError with
    the message while grading (or for the hidden battery), else print it under a cross."""
    __tracebackhide__ = True  # IPython and pytest: show the message, not this frame
    spec = find_check(assignment or _chosen(), grade_id, len(targets))
    namespace = dict(zip(spec.targets, targets, strict=True))
    owners = _graded(spec.assignment, sys._getframe(1).f_globals) | namespace
    grading = hidden or graded_now()
    try:
        run_one = partial(run_case, namespace, owners=owners)
        kept = kept_for(*owners.values())  # the targets and every graded function
        verdict = run_check(spec, run_one, hidden=hidden, seed=seed, kept=kept)
    except CheckerError as exc:  # a course bug: the cell scores 0 when graded
        if grading:
            raise
        verdict = Verdict(CRASHED, f"{exc} (a bug in the course: please report it)")
    if verdict.passed:
        if not hidden:
            print(passed_line(spec, verdict.note) + "\n", end="")  # one write: one message
    elif grading:
        raise AssertionError(verdict.failure_text(hidden))
    else:
        print(failed_text(spec, verdict.message) + "\n", end="")


def reference_norms() -> dict:
    """LayerNorms to try a witness on (ps3), by what a witness should answer: the course's
    correct one and its red team's wrong_axis, in a full install of the course; in the
    student download, none (it holds no LayerNorm): it says so, and returns {}."""
    from . import recording

    if recording.RECORDING is not None:
        print(
            "The student download holds no LayerNorm to try your witness on: try it on your "
            "own (your ps2 layer_norm, pasted into a cell; your batch_norm of Part A). The "
            "checks below run it on the course's LayerNorms when your notebook is graded."
        )
        return {}
    import normlab

    return {
        "normlab.layer_norm (True)": normlab.layer_norm,
        "normlab.red_team.wrong_axis (False)": normlab.red_team.wrong_axis,
    }


def _lost(failing: int, lost: float) -> str:
    """'none fails', 'the one that fails loses 2 points', 'the 3 that fail lose 7 points'."""
    if not failing:
        return "none fails"
    if failing == 1:
        return f"the one that fails loses {points(lost)}"
    return f"the {failing} that fail lose {points(lost)}"


def _graded(assignment: str, names: dict) -> dict:
    """The notebook's objects of every name the assignment's checks read (its graded
    functions), from its globals: whose library call is whose (`tripwire.delegated`)."""
    return {name: names[name] for name in GRADED.get(assignment, ()) if name in names}


def try_it(function, *args, **kwargs):
    """Call function(*args, **kwargs) in a "try it" cell and return what it returns (the cell
    shows it). If it raises, print the error and the lines of the notebook's own code it came
    through on stdout (no library's source: feedback shows this output) and return None: the
    notebook runs on. A KeyboardInterrupt (a timeout) still stops it."""
    name = getattr(function, "__name__", "the function")
    try:
        returned = function(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 (shown to the student, who fixes it)
        lines = [
            f"  in {frame.name}, line {frame.lineno}: {frame.line}"
            for frame in traceback.extract_tb(exc.__traceback__.tb_next)
            if not _library(frame.filename)
        ]
        print("\n".join([f"✗ {name} raised {type(exc).__name__}: {exc}", *lines]))
        print("(the notebook runs on; the checks below say what to fix)")
        return None
    if returned is None:
        print(f"{name} returned None: is its body written, ending with return?")
    return returned


def _library(filename: str) -> bool:
    """Is this a file of an installed package (NumPy, normlab...), not the notebook's code?"""
    path = os.path.abspath(filename)
    return any(path.startswith(root) for root in _LIBRARY_ROOTS)


_LIBRARY_ROOTS = tuple(
    {os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}  # normlab's
    | {os.path.abspath(p) for p in sys.path if "site-packages" in p or "dist-packages" in p}
    | {os.path.dirname(os.__file__)}  # the standard library
)


def whose_numbers() -> str:
    """The summary's line on whose variant the checks ran on, with a warning when that id is
    not the hub's user (the notebook's STUDENT names someone else)."""
    student = _current.get("student")
    if not student:
        return student_variant.ASK
    line = f"These checks ran on the numbers of {student} (from {_current['how']})."
    hub = os.environ.get("JUPYTERHUB_USER", "")
    if hub and hub != student:
        line += (
            f" Careful: you are logged in as {hub}. When your notebook is graded, it runs on "
            f"the numbers of the student who submits it."
        )
    return line


def summary(namespace: dict) -> None:
    """Print how many visible checks pass on `namespace` (the notebook's `globals()`) and
    the points they cover, with a line per check; never raises."""
    try:
        specs = CHECKS[_chosen()].values()
        lines, passed, earned = [], 0, 0.0
        kept: dict = {}  # no cell runs while the summary judges
        for spec in specs:
            try:
                verdict = run_check(spec, partial(run_case, namespace), kept=kept)
            except Exception:  # noqa: BLE001 (a check that cannot run does not pass)
                verdict = Verdict(CRASHED, "the check could not run")
            passed += verdict.passed
            earned += spec.points if verdict.passed else 0.0
            lines.append(check_line(spec, "✓" if verdict.passed else "✗", verdict.note))
        total = sum(spec.points for spec in specs)
        failing = len(lines) - passed
        lost = _lost(failing, total - earned)
        print(
            f"{passed} of {len(lines)} visible checks pass, covering {earned:g} of the "
            f"{points(total)} they check; {lost}."
        )
        print("\n".join(lines))
        manual = MANUAL.get(_chosen(), {})
        if manual:
            cells = ", ".join(f"{grade_id} ({points(p)})" for grade_id, p in manual.items())
            print(f"Graded by hand, not checked here: {cells}.")
        print(
            "Grading runs the same checks on more inputs (hidden ones), so a check that "
            "passes here can still fail there: a failed check's message says what to fix."
        )
        if "how" in _current:
            print(whose_numbers())
    except Exception as exc:  # noqa: BLE001 (a summary must never stop a notebook)
        print(f"The summary could not run ({type(exc).__name__}: {exc}).")
