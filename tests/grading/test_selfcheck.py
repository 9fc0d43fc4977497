"""The self-check a student sees: a tick per passing visible check, a cross and the message
per failing one, `try_it` in the "try it" cells, a summary at the end.

The points a check prints are the CheckSpec's copy of its grade cell's points, kept equal
here to the solution notebooks' nbgrader metadata (the truth at grading). The notebooks run
in a real kernel, as a student runs them, in test_run_all.py.
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest
from cells import PS2
from course_helpers import (
    TEST_STUDENT,
    autograded_cells,
    nbgrader_meta,
    points_lost,
    read,
    release_path,
    run_in_process,
    source_path,
    summary_counts,
)

from normlab.grading import (
    ASSIGNMENTS,
    CHECKS,
    MANUAL,
    REAL_TORCH,
    check,
    selfcheck,
    summary,
    try_it,
    use_assignment,
)
from normlab_sandbox import standins


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_check_carries_its_grade_cells_points(assignment):
    points = {gid: float(spec.points) for gid, spec in CHECKS[assignment].items()}
    assert points == autograded_cells(read(source_path(assignment)))


def test_each_hand_graded_cell_carries_its_notebook_points():
    """The summary names the hand-graded cells with their points (the notebook's metadata)."""
    for assignment in ASSIGNMENTS:
        nb = read(source_path(assignment))
        manual = {
            nbgrader_meta(c)["grade_id"]: float(nbgrader_meta(c)["points"])
            for c in nb.cells
            if nbgrader_meta(c).get("grade") and nbgrader_meta(c).get("solution")
        }
        assert manual == {g: float(p) for g, p in MANUAL.get(assignment, {}).items()}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_passing_visible_check_prints_one_tick_line_and_returns_none(assignment, capsys):
    namespace = run_in_process(read(source_path(assignment)))
    use_assignment(assignment, student=TEST_STUDENT)
    capsys.readouterr()
    for grade_id, spec in CHECKS[assignment].items():
        assert check(grade_id, *(namespace[t] for t in spec.targets)) is None
        shown = capsys.readouterr()
        assert shown.err == ""
        assert re.fullmatch(rf"✓ {grade_id}: .+ \({spec.points:g} points?\)\n", shown.out)
        assert shown.out == selfcheck.passed_line(spec) + "\n"
        assert check(grade_id, *(namespace[t] for t in spec.targets), hidden=True) is None
        assert capsys.readouterr().out.strip() == "", "a hidden battery prints nothing"


def test_the_tick_line_names_the_check_and_its_points():
    assert selfcheck.passed_line(PS2.axis) == (
        "✓ axis: LayerNorm: statistics over the last axis (3 points)"
    )
    assert selfcheck.passed_line(PS2.centering).endswith("(1 point)")


def test_a_failing_check_prints_its_message_under_a_cross_and_returns(capsys, monkeypatch):
    """In a student's kernel a failure is printed and the notebook runs on (Run All)."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    use_assignment(PS2.axis.assignment)
    capsys.readouterr()
    assert check(PS2.axis.grade_id, _unwritten) is None
    shown = capsys.readouterr()
    assert shown.err == ""
    assert shown.out.startswith(
        selfcheck.check_line(PS2.axis, "✗") + "\n  layer_norm is not written yet"
    )
    assert shown.out.count("\n") == 2


@pytest.mark.parametrize("mode", ["autograde", "validate"])
def test_while_nbgrader_grades_a_failing_check_raises_the_judges_message(mode, capsys, monkeypatch):
    """nbgrader sets NBGRADER_EXECUTION in the kernel it grades in: the cell must fail."""
    monkeypatch.setenv("NBGRADER_EXECUTION", mode)
    use_assignment(PS2.axis.assignment)
    capsys.readouterr()
    with pytest.raises(AssertionError, match="^layer_norm is not written yet"):
        check(PS2.axis.grade_id, _unwritten)
    assert capsys.readouterr().out == ""


def test_a_failing_hidden_battery_raises_even_outside_nbgrader(capsys, monkeypatch):
    """Only a graded notebook holds hidden batteries (nbgrader restores them), so they raise
    whatever the environment says."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    use_assignment(PS2.axis.assignment)
    with pytest.raises(AssertionError, match="^On a hidden input: layer_norm is not written"):
        check(PS2.axis.grade_id, _unwritten, hidden=True)
    assert capsys.readouterr().out == ""


def test_try_it_shows_the_output_or_prints_the_error_and_returns_none(capsys):
    def broken(x):
        return x + np.ones(3)

    assert try_it(np.add, 1, 2) == 3
    assert capsys.readouterr().out == ""
    assert try_it(broken, np.ones(2)) is None
    shown = capsys.readouterr()
    assert shown.err == ""
    assert shown.out.startswith("✗ broken raised ValueError: operands could not be broadcast")
    assert "  in broken, line " in shown.out and "return x + np.ones(3)" in shown.out
    # no traceback header and no library's lines: generated feedback shows this output
    assert "Traceback" not in shown.out and 'File "' not in shown.out
    assert "try_it" not in shown.out
    assert try_it(lambda: None) is None
    assert "returned None" in capsys.readouterr().out


def test_try_it_shows_no_line_of_a_librarys_source(capsys):
    """A student's function that makes normlab raise: the message, the student's line, and
    nothing of the reference's source."""
    import normlab

    def calls_the_reference(x):
        return normlab.layer_norm(x, gamma=np.ones(5))  # x has 3 features

    assert try_it(calls_the_reference, np.ones((2, 3))) is None
    shown = capsys.readouterr().out
    assert shown.startswith("✗ calls_the_reference raised ValueError")
    assert shown.count("\n  in ") == 1 and "return normlab.layer_norm(x, gamma" in shown


def test_try_it_lets_an_interrupt_through():
    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        try_it(interrupted)


def _unwritten(x, gamma, beta, eps=1e-5):
    raise NotImplementedError


NOTEBOOKS = [(a, which) for a in ASSIGNMENTS for which in ("solution", "blank")]


@pytest.mark.parametrize(("assignment", "which"), NOTEBOOKS)
def test_summary_counts_the_passing_visible_checks_and_their_points(assignment, which, capsys):
    """The solution passes every visible check, a blank notebook none."""
    path = source_path(assignment) if which == "solution" else release_path(assignment)
    namespace = run_in_process(read(path))
    use_assignment(assignment, student=TEST_STUDENT)
    capsys.readouterr()
    assert summary(namespace) is None
    shown = capsys.readouterr()
    specs = CHECKS[assignment].values()
    total = sum(spec.points for spec in specs)
    passed = len(specs) if which == "solution" else 0
    assert summary_counts(shown.out) == (passed, len(specs), total * bool(passed), total)
    assert points_lost(shown.out) == (0.0 if passed else total)
    assert shown.out.count("✓ ") == passed and shown.out.count("✗ ") == len(specs) - passed
    for grade_id, points in MANUAL.get(assignment, {}).items():
        assert f"Graded by hand, not checked here: {grade_id} ({points:g} points)." in shown.out
    assert "more inputs" in shown.out and shown.err == ""


@pytest.mark.parametrize("namespace", [None, {}, {"layer_norm": 3}, {"row_stats": print}])
def test_summary_never_raises(namespace, capsys):
    use_assignment("ps2_layer_norm")
    assert summary(namespace) is None
    assert "visible checks pass" in capsys.readouterr().out


def test_without_torch_only_a_torch_assignment_stops_its_setup_cell(monkeypatch):
    """ps8's setup cell says how to install torch where there is none; the others run."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    for assignment in ASSIGNMENTS:
        if assignment not in REAL_TORCH:
            use_assignment(assignment, student=TEST_STUDENT)
    with pytest.raises(ModuleNotFoundError, match="ps8_in_a_model needs torch") as raised:
        use_assignment("ps8_in_a_model")
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in str(raised.value)
    assert REAL_TORCH == {"ps8_in_a_model"}


def test_summary_before_the_setup_cell_says_what_to_run(capsys, monkeypatch):
    # summary reads its caller's globals too: this module's, where other tests set one up
    monkeypatch.delitem(globals(), selfcheck.SESSION, raising=False)
    assert summary({}) is None  # a namespace without a session
    assert "run the notebook's first code cell" in capsys.readouterr().out


def test_in_the_sandbox_summary_is_a_quiet_stand_in(capsys, monkeypatch):
    """The grader's kernel serves a stand-in normlab: summary must not ask the grader, and
    leaves nothing in the student's feedback (the grader grades every check itself)."""
    monkeypatch.setattr(standins, "ask", _no_questions)
    stand_in = standins.StandInModule("normlab.grading").summary
    assert stand_in({"layer_norm": object()}) is None
    assert capsys.readouterr().out == ""


def _no_questions(*args, **kwargs):
    raise AssertionError("the summary stand-in asked the grader")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_try_it_cell_calls_through_try_it(assignment):
    """The released notebooks' "try it" cells (id try-...) call the student's functions only
    through try_it, which shows an error and lets Run All go on."""
    tries = [c for c in read(release_path(assignment)).cells if c.get("id", "").startswith("try")]
    assert all("try_it(" in cell.source for cell in tries)
    assert tries or assignment == "ps1_by_hand"


HONEST_LAYER_NORM = """
def layer_norm(x, gamma, beta, eps=1e-5):
    calls.append(None)
    x = np.asarray(x, dtype=np.float64)
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta
"""


def _counted_layer_norm():
    namespace = {"np": np, "calls": []}
    exec(HONEST_LAYER_NORM, namespace)  # noqa: S102 - a student's answer cell
    return namespace["layer_norm"], namespace["calls"]


def _session():
    """The session `use_assignment` left in this module's namespace (the 'notebook')."""
    return globals()[selfcheck.SESSION]


def _calls_of(cell: str, layer_norm, calls) -> int:
    before = len(calls)
    _session().cell_begins(cell)
    check(cell.split('"')[1], layer_norm)
    return len(calls) - before


def test_while_only_check_cells_run_each_battery_is_judged_once(capsys):
    """A function's reuse battery, judged before each of its cells, is judged once while test
    cells run one after the other; any other cell drops what was kept; a runner that does not
    say where cells begin keeps nothing."""
    layer_norm, calls = _counted_layer_norm()
    use_assignment("ps2_layer_norm")
    try:
        _session().cell_begins("def layer_norm(x, gamma, beta, eps=1e-5): ...")
        _calls_of('check("axis", layer_norm)', layer_norm, calls)
        kept = _calls_of('check("centering", layer_norm)', layer_norm, calls)
        again = _calls_of('check("centering", layer_norm)', layer_norm, calls)
        dropped = _calls_of('y = 1\ncheck("centering", layer_norm)', layer_norm, calls)
        _session().cells_end()
        before = len(calls)
        check(PS2.centering.grade_id, layer_norm)  # no cell said it begins
        untracked = len(calls) - before
    finally:
        _session().cells_end()
    reuse = len(PS2.reference_reuse.make_cases(0, hidden=False))
    assert again == 0  # the same cell again: its own battery was kept too
    assert dropped == kept + reuse  # reference_reuse's battery runs again, its cases once each
    assert untracked == dropped
    assert capsys.readouterr().out.count("✓ ") == 5  # every verdict is the same pass


def test_in_an_ipython_kernel_each_cell_says_it_begins():
    """`use_assignment` has IPython tell `check` where each cell begins (pre_run_cell)."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_cell('from normlab.grading import use_assignment\nuse_assignment("ps1_by_hand")')
        session = shell.user_ns[selfcheck.SESSION]
        shell.run_cell("y = 1")
        assert session.memo == {}
        session.memo["earlier"] = "a verdict"
        shell.run_cell('"""A test cell."""\ncheck("mean", y)')  # only check calls: kept
        assert "earlier" in session.memo
        shell.run_cell("y = 2")
        assert session.memo == {}
    finally:
        shell.events.unregister("pre_run_cell", session.on_cell)
        InteractiveShell.clear_instance()
