"""run_case's guards, the tripwire, the private reference copy, and the feedback's steps."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest
from cells import PS2, verdict_of
from course_helpers import own_variant
from nbgrader.preprocessors import ClearHiddenTests
from traitlets.config.loader import PyFileConfigLoader

import normlab
from normlab import grading
from normlab.answer_key import reference as private
from normlab.answer_key import trusted
from normlab.answer_key.batteries import ps3_axes as ps3_batteries
from normlab.course.plugins import ConciseErrors
from normlab.grading import (
    CHECKS,
    Case,
    Ref,
    check,
    run_case,
    use_assignment,
)
from normlab_sandbox import tripwire
from normlab_sandbox.tripwire import TRIPWIRE_REMOVED, Tripwire

REPO = Path(__file__).resolve().parents[2]


def correct_ln(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + eps) + beta


def test_run_case_copies_inputs_and_reports_writes():
    x = np.arange(6.0).reshape(2, 3)

    def scribble(a):
        a[0, 0] = 99.0
        return a.sum()

    result = run_case({"f": scribble}, Case("f", args=(x,)))
    assert result.modified_inputs == (0,)
    assert x[0, 0] == 0.0  # the case's own array is never touched


def test_run_case_captures_warnings_and_stderr_without_printing(capfd):
    def noisy(a):
        print("debugging", file=sys.stderr)
        return a / 0.0

    result = run_case({"f": noisy}, Case("f", args=(np.zeros(3),)))
    assert result.error is None
    assert any(category == "RuntimeWarning" for category, _ in result.warnings)
    assert capfd.readouterr().err == ""


def test_run_case_turns_exceptions_and_exit_into_errors():
    def broken(a):
        raise ZeroDivisionError("no")

    def quits(a):
        raise SystemExit(3)

    assert run_case({"f": broken}, Case("f", args=(1,))).error == ("ZeroDivisionError", "no")
    assert run_case({"f": quits}, Case("f", args=(1,))).error[0] == "SystemExit"
    missing = run_case({}, Case("g", args=(1,)))
    assert missing.error[0] == "NameError"


def test_run_case_makes_outputs_plain_data():
    torch = pytest.importorskip("torch")
    result = run_case({"f": lambda: torch.ones(2)}, Case("f"))
    assert isinstance(result.output, np.ndarray) and result.output_type == "torch.Tensor"
    pair = run_case({"f": lambda: (np.zeros(2), 1.5)}, Case("f"))
    assert pair.output_type == "tuple(numpy.ndarray, float)"


def test_tripwire_sees_a_reference_captured_under_another_name():
    captured = normlab.layer_norm

    def sneaky(x, gamma, beta, eps=1e-5):
        return captured(x, gamma, beta, eps)

    verdict = verdict_of(PS2.reference_reuse, {"layer_norm": sneaky})
    assert verdict.category == PS2.reference_reuse.category
    assert "normlab.layer_norm" in verdict.message
    # ... and the cells that grade numbers are not judged (the reuse policy, "function")
    axis = verdict_of(PS2.axis, {"layer_norm": sneaky})
    assert axis.category == "not judged" and "normlab.layer_norm" in axis.message


def test_tripwire_ignores_the_graders_private_copy():
    wire = Tripwire()
    with wire.active():
        private.layer_norm(np.ones((2, 3)))
    assert wire.calls == []


def test_tripwire_watches_every_module_of_normlab_but_the_graders_own():
    """Its normlab folder is the one `import normlab` loads, and only grading, the answer key and
    course are exempt: a call into any other normlab module (the bench's fast LayerNorm too) is
    reuse."""
    folder = Path(normlab.__file__).resolve().parent
    assert tripwire.NORMLAB_DIR.resolve() == folder
    for path in sorted(folder.rglob("*.py")):
        top = path.relative_to(folder).parts[0]
        label = tripwire.label_for(str(path), "f")
        assert (label is None) == (top in ("grading", "answer_key", "course")), path


def test_tripwire_notices_when_it_is_removed():
    wire = Tripwire()
    with wire.active():
        sys.setprofile(None)
    assert wire.calls == [TRIPWIRE_REMOVED]


def test_patching_normlab_in_the_kernel_does_not_move_the_expectations(monkeypatch):
    """A student cell that rebinds normlab's functions cannot change what the checks expect."""
    monkeypatch.setattr(normlab, "layer_norm", lambda x, *a, **k: np.asarray(x))
    monkeypatch.setattr(normlab.stats, "centered_and_var", None)
    assert private.layer_norm(np.array([1.0, 2.0, 3.0, 4.0]), eps=0.0)[0] == pytest.approx(
        -1.341640786
    )
    assert verdict_of(PS2.axis, {"layer_norm": correct_ln}).passed


def test_cases_are_deterministic_and_plain():
    for assignment, specs in CHECKS.items():
        for grade_id, spec in specs.items():
            own = own_variant(spec)
            first, again = spec.make_cases(0, **own), spec.make_cases(0, **own)
            assert len(first) == len(again) > 0, (assignment, grade_id)
            for a, b in zip(first, again, strict=True):
                assert a.target == b.target and a.how == b.how and a.tag == b.tag
                assert a.probe == b.probe and a.kwargs == b.kwargs
                for u, v in zip(a.args, b.args, strict=True):
                    # ps8's probes also take a normalized_shape tuple, and None for "none"
                    plain_tuple = isinstance(u, tuple) and all(type(i) is int for i in u)
                    assert (
                        isinstance(u, np.ndarray | float | int | str | Ref)
                        or plain_tuple
                        or (u is None and a.how == "probe")
                    )
                    if isinstance(u, np.ndarray):
                        np.testing.assert_array_equal(u, v)
            visible = spec.make_cases(0, hidden=False, **own)
            assert [c.label for c in first[: len(visible)]] == [c.label for c in visible]


def test_check_raises_assertion_error_with_the_message_and_returns_none_on_pass():
    use_assignment(PS2.axis.assignment)
    assert check(PS2.axis.grade_id, correct_ln) is None

    def wrong_axis(x, gamma, beta, eps=1e-5):
        return correct_ln(np.swapaxes(x, 0, -1), 1.0, 0.0, eps).swapaxes(0, -1) * gamma + beta

    with pytest.raises(AssertionError, match="Wrong axis"):
        check(PS2.axis.grade_id, wrong_axis, hidden=True)
    with pytest.raises(TypeError, match="reads 1 value"):
        check(PS2.axis.grade_id, correct_ln, correct_ln)


def test_a_correct_answer_emits_no_warning_through_check():
    """Nothing a check does may write to stderr: nbgrader would zero the cell."""
    use_assignment(PS2.axis.assignment)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for spec in (PS2.eps_placement, PS2.numerics):
            check(spec.grade_id, correct_ln, hidden=True)


def test_a_zero_variance_warning_becomes_part_of_the_message():
    def no_eps(x, gamma, beta, eps=1e-5):
        return gamma * (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True) + beta

    message = verdict_of(PS2.eps_placement, {"layer_norm": no_eps}).message
    assert "No eps" in message and "NumPy warned" in message


def test_witness_refs_are_anonymous_closures():
    made: dict = {}
    fn = trusted.resolve(Ref("red_team.wrong_axis"), made)
    assert fn.__name__ == "norm_fn" and fn.__module__ == "normlab.answer_key.trusted"


def test_feedback_clears_hidden_tests_with_nbgraders_step_and_cuts_tracebacks():
    """The course's nbgrader_config.py puts nbgrader's ClearHiddenTests and ConciseErrors into
    generate_feedback (whose default shows hidden tests)."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    steps = config.GenerateFeedback.preprocessors
    assert ClearHiddenTests in steps and ConciseErrors in steps
    source = "\n".join(
        [
            'check("axis", f)',
            "### BEGIN HIDDEN TESTS",
            'check("axis", f, hidden=True)',
            "### END HIDDEN TESTS",
        ]
    )
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": PS2.axis.grade_id, "points": 3}
    cell.outputs = [
        nbformat.v4.new_output(
            "error",
            ename="AssertionError",
            evalue="Wrong axis: ...",
            traceback=[
                "frame in lib/normlab/grading/selfcheck.py",
                "raise AssertionError(message)",
            ],
        )
    ]
    nb = nbformat.v4.new_notebook(cells=[cell])
    for step in (ClearHiddenTests, ConciseErrors):
        nb, _ = step()(nb, {})  # __call__: runs only when enabled
    assert nb.cells[0].source == 'check("axis", f)'
    assert nb.cells[0].outputs[0]["traceback"] == ["Wrong axis: ..."]  # the message alone


def test_every_wrong_layer_norm_ps3_plants_is_a_trusted_callable():
    """ps3's LayerNorms, by name: the red team's and the graders' own all resolve, and the
    visible battery runs the red team's only."""
    refs = {
        hidden: {
            arg.name
            for spec in grading.CHECKS["ps3_axes"].values()
            for case in spec.make_cases(grading.DEFAULT_SEED, hidden=hidden)
            for arg in case.args
            if isinstance(arg, Ref)
        }
        for hidden in (False, True)
    }
    assert refs[False] == {"layer_norm", *ps3_batteries._PLANTED_WORDS}
    assert refs[True] > refs[False]
    assert {ref.split(".")[0] for ref in refs[True] - refs[False]} == {"planted", "layer_norm_alt"}
    for ref in refs[True]:
        assert callable(trusted.resolve(Ref(ref), {}))
