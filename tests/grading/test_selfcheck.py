"""The self-check a student sees: a tick per passing visible check, a summary at the end.

The points a check prints are the CheckSpec's copy of its grade cell's points, kept equal
here to the solution notebooks' nbgrader metadata (the truth at grading). The notebooks
run in a real kernel, filled with the instructor's answers and blank, as a student would
run them.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from course_helpers import (
    SUMMARY_CELL,
    autograded_cells,
    nbgrader_meta,
    read,
    release_path,
    run_in_process,
    source_path,
)
from nbclient import NotebookClient

from normlab.grading import ASSIGNMENTS, CHECKS, check, selfcheck, summary, use_assignment
from normlab_sandbox import standins


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_check_carries_its_grade_cells_points(assignment):
    points = {gid: float(spec.points) for gid, spec in CHECKS[assignment].items()}
    assert points == autograded_cells(read(source_path(assignment)))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_passing_visible_check_prints_one_tick_line_and_returns_none(assignment, capsys):
    namespace = run_in_process(read(source_path(assignment)))
    use_assignment(assignment)
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
    spec = CHECKS["ps2_layer_norm"]["axis"]
    assert selfcheck.passed_line(spec) == (
        "✓ axis: LayerNorm: statistics over the last axis (3 points)"
    )
    assert selfcheck.passed_line(CHECKS["ps2_layer_norm"]["centering"]).endswith("(1 point)")


def test_a_failing_check_raises_the_judges_message_and_prints_nothing(capsys):
    use_assignment("ps2_layer_norm")
    with pytest.raises(AssertionError, match="^layer_norm is not written yet"):
        check("axis", _unwritten)
    assert capsys.readouterr().out == ""


def _unwritten(x, gamma, beta, eps=1e-5):
    raise NotImplementedError


def _summary_counts(text: str) -> tuple[int, int, float, float]:
    found = re.search(
        r"(\d+) of (\d+) visible checks pass, covering ([\d.]+) of the ([\d.]+) points", text
    )
    assert found, text
    passed, total, earned, points = found.groups()
    return int(passed), int(total), float(earned), float(points)


NOTEBOOKS = [(a, which) for a in ASSIGNMENTS for which in ("solution", "blank")]


@pytest.mark.parametrize(("assignment", "which"), NOTEBOOKS)
def test_summary_counts_the_passing_visible_checks_and_their_points(assignment, which, capsys):
    """The solution passes every visible check, a blank notebook none."""
    path = source_path(assignment) if which == "solution" else release_path(assignment)
    namespace = run_in_process(read(path))
    use_assignment(assignment)
    capsys.readouterr()
    assert summary(namespace) is None
    shown = capsys.readouterr()
    specs = CHECKS[assignment].values()
    total = sum(spec.points for spec in specs)
    passed = len(specs) if which == "solution" else 0
    assert _summary_counts(shown.out) == (passed, len(specs), total * bool(passed), total)
    assert shown.out.count("✓ ") == passed and shown.out.count("✗ ") == len(specs) - passed
    assert "more inputs" in shown.out and shown.err == ""


@pytest.mark.parametrize("namespace", [None, {}, {"layer_norm": 3}, {"row_stats": print}])
def test_summary_never_raises(namespace, capsys):
    use_assignment("ps2_layer_norm")
    assert summary(namespace) is None
    assert "visible checks pass" in capsys.readouterr().out


def test_summary_before_the_setup_cell_says_what_to_run(monkeypatch, capsys):
    monkeypatch.setattr(selfcheck, "_current", {})
    assert summary({}) is None
    assert "run the notebook's first code cell" in capsys.readouterr().out


def test_in_the_sandbox_summary_is_a_stand_in_that_only_prints(capsys, monkeypatch):
    """The grader's kernel serves a stand-in normlab: summary must not ask the grader."""
    monkeypatch.setattr(standins, "ask", _no_questions)
    stand_in = standins.StandInModule("normlab.grading").summary
    assert stand_in({"layer_norm": object()}) is None
    assert "summary(...)" in capsys.readouterr().out


def _no_questions(*args, **kwargs):
    raise AssertionError("the summary stand-in asked the grader")


# --- the notebooks in a real kernel, as a student runs them ---------------------------------


def _filled_release(assignment: str):
    """The released notebook with the instructor's answers in its answer cells."""
    answers = {
        nbgrader_meta(c)["grade_id"]: c.source
        for c in read(source_path(assignment)).cells
        if nbgrader_meta(c).get("solution")
    }
    nb = read(release_path(assignment))
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") in answers:
            cell.source = answers[nbgrader_meta(cell)["grade_id"]]
    return nb


def _execute(nb):
    client = NotebookClient(nb, timeout=300, allow_errors=True, kernel_name="python3")
    client.execute()
    return nb


def _outputs(nb, grade_id: str) -> list:
    return next(c.outputs for c in nb.cells if nbgrader_meta(c).get("grade_id") == grade_id)


def _text(outputs) -> str:
    return "".join(o.get("text", "") for o in outputs if o.output_type == "stream")


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_notebook_filled_with_the_solution_ticks_every_check_in_a_kernel(assignment):
    nb = _execute(_filled_release(assignment))
    for grade_id, spec in CHECKS[assignment].items():
        outputs = _outputs(nb, grade_id)
        # stdout only (a stream may arrive in pieces): nbgrader reads nothing else as a score
        assert {(o.output_type, o.get("name")) for o in outputs} == {("stream", "stdout")}, outputs
        assert _text(outputs) == selfcheck.passed_line(spec) + "\n"
    last = nb.cells[-1]
    assert nbgrader_meta(last).get("grade_id") == SUMMARY_CELL
    assert not any(o.output_type == "error" for o in last.outputs)
    n = len(CHECKS[assignment])
    assert _summary_counts(_text(last.outputs))[:2] == (n, n)


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_blank_notebooks_summary_says_none_pass_and_raises_nothing_in_a_kernel(assignment):
    nb = _execute(nbformat.from_dict(read(release_path(assignment))))
    summary_outputs = _outputs(nb, SUMMARY_CELL)
    assert {(o.output_type, o.get("name")) for o in summary_outputs} == {("stream", "stdout")}
    assert _summary_counts(_text(summary_outputs))[:2] == (0, len(CHECKS[assignment]))
