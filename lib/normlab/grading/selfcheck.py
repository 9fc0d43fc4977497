"""What a notebook calls in the student's kernel: `use_assignment`, `check`, `try_it`, `summary`.

    use_assignment("ps2_layer_norm")          # once, in the notebook's locked setup cell
    r, d_model = my_variant()                 # ps1: the student's own numbers (`pools`)
    try_it(layer_norm, x, gamma, beta)        # a "try it" cell: the output, or the error shown
    check("axis", layer_norm)                 # a test cell: the visible battery
    check("axis", layer_norm, hidden=True)    # the same cell's hidden battery (autograde only)
    summary(globals())                        # the notebook's last cell

`use_assignment` keeps the notebook's `Session` in the notebook's own namespace (`SESSION`);
in IPython it hears where each cell begins (`pre_run_cell`). A passing visible check prints
"✓ <grade_id>: <summary> (<points> points)"; a failing one prints its message under a cross
in a student's kernel and raises `CheckFailed` while nbgrader grades or for a hidden battery
(why: ARCHITECTURE.md, "Run All, and a failing check at grading"). Everything goes to stdout
and `check` returns None: nbgrader reads an execute_result as partial credit and zeroes a cell
that writes to stderr. While nbgrader grades, the reuse policy is the course's configuration's
(`session.POLICY_ENV`, set by `normlab.course.plugins.ReusePolicy`), whatever the setup cell says.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from functools import partial

from normlab_sandbox import student_variant

from . import backing, pools
from .catalog import CHECKS, GRADED, MANUAL, REAL_TORCH
from .runner import run_case
from .session import POLICIES, POLICY_ENV, CheckerError, Session
from .spec import DEFAULT_SEED, CheckSpec
from .verdict import CRASHED, Verdict

SESSION = "__normlab_session__"  # where a notebook's namespace keeps its Session


def use_assignment(assignment: str, reuse_voids: str = POLICIES[0], student: str = "") -> None:
    """Start the notebook's grading session (the setup cell calls this): the assignment, the
    reuse policy (one of `session.POLICIES`; `POLICY_ENV` overrides it while nbgrader grades)
    and, for an assignment with a pool (ps1), the notebook's STUDENT (`pools.student_id`). An
    assignment that grades torch code (ps8) raises ModuleNotFoundError, saying how to install
    torch, in a Python without it."""
    namespace = sys._getframe(1).f_globals
    session = Session(assignment, os.environ.get(POLICY_ENV) or reuse_voids)
    if assignment in pools.POOLS:
        found, session.how = pools.student_id(student.strip())
        session.student, session.claimed = found, student.strip()
        session.variant = pools.variant(assignment, found) if found else None
    _follow_cells(namespace.get(SESSION), session)
    namespace[SESSION] = session
    if assignment in REAL_TORCH and importlib.util.find_spec("torch") is None:
        raise ModuleNotFoundError(
            f"{assignment} needs torch, which this Python does not have. Install its CPU "
            "build, in a cell: %pip install torch --index-url "
            "https://download.pytorch.org/whl/cpu (Exercises > Getting started on the course's "
            "site says more), then restart the kernel and run the notebook again.",
            name="torch",
        )


def _follow_cells(old: Session | None, new: Session) -> None:
    """In IPython, have each cell tell the new session where it begins (the old one no longer)."""
    ipython = sys.modules.get("IPython")  # imported already where a shell runs
    shell = ipython.get_ipython() if ipython else None
    if shell is None:
        return
    if old is not None and old.on_cell in shell.events.callbacks["pre_run_cell"]:
        shell.events.unregister("pre_run_cell", old.on_cell)
    shell.events.register("pre_run_cell", new.on_cell)
    shell.set_custom_exc((CheckFailed,), _show_failure)


def session_of(namespace: dict, assignment: str | None = None) -> Session:
    """The notebook's session, from its namespace; a session of `assignment` if it has none."""
    found = namespace.get(SESSION)
    if found is not None and assignment in (None, found.assignment):
        return found
    if assignment is None:
        raise RuntimeError(
            "no assignment chosen: run the notebook's first code cell (use_assignment(...))"
        )
    return Session(assignment)


def my_variant():
    """The student's own numbers for the assignment (ps1): (r, d_model), shown; (None, None)
    after asking for the student's id when it is not known (the notebook runs on)."""
    session = session_of(sys._getframe(1).f_globals)
    return student_variant.my_variant(vars(session))


def find_check(assignment: str, grade_id: str, count: int) -> CheckSpec:
    """The CheckSpec of cell `grade_id`: KeyError if none, TypeError if `count` targets are
    not its number."""
    spec = CHECKS.get(assignment, {}).get(grade_id)
    if spec is None:
        raise KeyError(grade_id)
    if count != len(spec.targets):
        raise TypeError(
            f"check({grade_id!r}) reads {len(spec.targets)} value(s), "
            f"{', '.join(spec.targets)}; got {count}"
        )
    return spec


def run_check(spec: CheckSpec, run_one, *, hidden=False, seed=DEFAULT_SEED, **options) -> Verdict:
    """The `Verdict` of one battery of `spec` in a session of its own (`options`: the Session's
    policy and variant, and `judge`'s oracle and kept)."""
    judging = {k: options.pop(k) for k in ("oracle", "kept") if k in options}
    session = Session(spec.assignment, **options)
    return session.judge(spec, run_one, hidden=hidden, seed=seed, **judging)


def points(value: float) -> str:
    """'1 point', '3 points'."""
    return f"{value:g} point{'' if value == 1 else 's'}"


def check_line(spec: CheckSpec, mark: str, note: str | None = None) -> str:
    """One check's line, "<mark> <grade_id>: <summary>[, <note>] (<points>)"."""
    said = f"{spec.summary}, {note}" if note else spec.summary
    return f"{mark} {spec.grade_id}: {said} ({points(spec.points)})"


def passed_line(spec: CheckSpec, note: str | None = None) -> str:
    """What a passing visible check prints."""
    return check_line(spec, "✓", note)


class CheckFailed(AssertionError):
    """A check that fails while nbgrader grades (or a hidden battery): its cell scores 0. IPython
    shows its message alone (`_show_failure`), not below this module's frames."""


# Its name, to every reader, is AssertionError's: ipykernel names a failed cell's reply by
# type(error).__name__, and nbgrader's Execute adds that reply as a second error output when no
# output bears its name (nbgrader 0.9: preprocessors/execute.py), so a feedback page would show
# the failure twice; the graders and the feedback page know a failed check as an AssertionError.
CheckFailed.__name__ = CheckFailed.__qualname__ = "AssertionError"


def _show_failure(shell, etype, value, tb, tb_offset=None) -> list[str]:
    """IPython's handler for `CheckFailed`: the message, no frames, as an AssertionError (as the
    course's grader writes it)."""
    lines = [f"AssertionError: {value}"]
    shell._showtraceback(etype, value, lines)
    return lines


def check(
    grade_id: str,
    *targets,
    hidden: bool = False,
    assignment: str | None = None,
    seed: int = DEFAULT_SEED,
) -> None:
    """Run cell `grade_id`'s check on `targets` (see the module docstring)."""
    __tracebackhide__ = True  # IPython and pytest: show the message, not this frame
    names = sys._getframe(1).f_globals
    session = session_of(names, assignment)
    spec = find_check(session.assignment, grade_id, len(targets))
    namespace = dict(zip(spec.targets, targets, strict=True))
    # every graded function of the notebook: whose library call is whose (`tripwire.delegated`)
    owners = {n: names[n] for n in GRADED.get(spec.assignment, ()) if n in names} | namespace
    # nbgrader sets NBGRADER_EXECUTION in the kernels it grades in (0.9: autograde, validator)
    grading = hidden or bool(os.environ.get("NBGRADER_EXECUTION"))
    try:
        run_one = partial(run_case, namespace, owners=owners)
        held = tuple(owners.values())  # the targets and every graded function
        kept = session.kept(tuple(map(id, held)), held)
        verdict = session.judge(spec, run_one, hidden=hidden, seed=seed, kept=kept)
    except CheckerError as exc:  # a course bug: the cell scores 0 when graded
        if grading:
            raise
        verdict = Verdict(CRASHED, f"{exc} (a bug in the course: please report it)")
    session.log.append((spec, hidden, verdict))
    if verdict.passed:
        if not hidden:
            print(passed_line(spec, verdict.note) + "\n", end="")  # one write: one message
    elif grading:
        raise CheckFailed(verdict.failure_text(hidden))
    else:
        print(f"{check_line(spec, '✗')}\n  {verdict.message}\n", end="")  # one write


def reference_norms() -> dict:
    """LayerNorms to try a witness on (ps3), by what a witness should answer; in the student
    download, which holds none, it says so and returns {}."""
    from .recorded import RecordedBacking

    if isinstance(backing.current(), RecordedBacking):
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


def try_it(function, *args, **kwargs):
    """A "try it" cell's call: what it returns; if it raises, the error and the notebook's own
    lines it came through (no library's) on stdout, and None. A KeyboardInterrupt stops it."""
    name = getattr(function, "__name__", "the function")
    try:
        returned = function(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 (shown to the student, who fixes it)
        lines = [
            f"  in {frame.name}, line {frame.lineno}: {frame.line}"
            for frame in traceback.extract_tb(exc.__traceback__.tb_next)
            if not os.path.abspath(frame.filename).startswith(_LIBRARY_ROOTS)
        ]
        print("\n".join([f"✗ {name} raised {type(exc).__name__}: {exc}", *lines]))
        print("(the notebook runs on; the checks below say what to fix)")
        return None
    if returned is None:
        print(f"{name} returned None: is its body written, ending with return?")
    return returned


# the files of installed packages (NumPy, normlab...), not the notebook's code
_LIBRARY_ROOTS = tuple(
    {os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}  # normlab's
    | {os.path.abspath(p) for p in sys.path if "site-packages" in p or "dist-packages" in p}
    | {os.path.dirname(os.__file__)}  # the standard library
)


def whose_numbers(session: Session) -> str:
    """Whose variant the checks ran on, with a warning when that is not the hub's user."""
    if not session.student:
        return f"These checks did not run: {student_variant.NOT_KNOWN}"
    line = f"These checks ran on the numbers of {session.student} (from {session.how})."
    hub = os.environ.get("JUPYTERHUB_USER", "")
    if hub and hub != session.student:
        line += (
            f" Careful: you are logged in as {hub}. When your notebook is graded, it runs on "
            f"the numbers of the student who submits it."
        )
    return line


def summary(namespace: dict) -> None:
    """Print how many visible checks pass on the notebook's globals() and the points they
    cover, a line per check; never raises."""
    try:
        namespace = namespace or {}
        session = namespace.get(SESSION) or session_of(sys._getframe(1).f_globals)
        specs = CHECKS[session.assignment].values()
        lines, passed, earned = [], 0, 0.0
        kept: dict = {}  # no cell runs while the summary judges
        for spec in specs:
            try:
                verdict = session.judge(spec, partial(run_case, namespace), kept=kept)
            except Exception:  # noqa: BLE001 (a check that cannot run does not pass)
                verdict = Verdict(CRASHED, "the check could not run")
            passed += verdict.passed
            earned += spec.points if verdict.passed else 0.0
            lines.append(check_line(spec, "✓" if verdict.passed else "✗", verdict.note))
        total = sum(spec.points for spec in specs)
        failing = len(lines) - passed
        lost = f"the {failing} that fail lose" if failing > 1 else "the one that fails loses"
        lost = f"{lost} {points(total - earned)}" if failing else "none fails"
        print(
            f"{passed} of {len(lines)} visible checks pass, covering {earned:g} of the "
            f"{points(total)} they check; {lost}."
        )
        print("\n".join(lines))
        manual = MANUAL.get(session.assignment, {})
        if manual:
            cells = ", ".join(f"{grade_id} ({points(p)})" for grade_id, p in manual.items())
            print(f"Graded by hand, not checked here: {cells}.")
        print(
            "Grading runs the same checks on more inputs (hidden ones), so a check that "
            "passes here can still fail there: a failed check's message says what to fix."
        )
        if session.assignment in pools.POOLS:
            print(whose_numbers(session))
    except Exception as exc:  # noqa: BLE001 (a summary must never stop a notebook)
        print(f"The summary could not run ({type(exc).__name__}: {exc}).")
