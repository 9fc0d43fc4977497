"""The checkers in-process: honest answers pass, unfilled stubs fail, planted bugs lose their cells.

These run the notebooks' code cells in this process and judge every grade cell with
its full autograde battery (`normlab.grading.cell_verdict`), so they are quick; the
nbgrader end-to-end tests (test_nbgrader.py) confirm the same scores through
nbgrader itself.
"""

from __future__ import annotations

import re
from functools import partial

import numpy as np
import pytest
from cells import PS2, PS3, PS4, PS5, verdict_of
from course_bank import BANK
from course_helpers import (
    autograded_cells,
    own_variant,
    read,
    release_path,
    run_in_process,
    source_path,
    with_bug,
)
from mutants import is_a_mutant

from normlab.grading import ASSIGNMENTS, CHECKS, Verdict, cell_verdict
from normlab.grading.catalog import cells_of
from normlab.grading.evidence import brief_type
from normlab.grading.runner import run_case
from normlab.grading.session import judge_battery
from normlab.grading.verdict import NOT_JUDGED, NOT_WRITTEN


def verdicts(assignment: str, namespace: dict) -> dict[str, Verdict]:
    return {gid: cell_verdict(assignment, gid, namespace) for gid in CHECKS[assignment]}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_test_cell_has_a_check_and_every_check_a_cell(assignment):
    cells = autograded_cells(read(source_path(assignment)))
    assert set(cells) == set(CHECKS[assignment])


def _same_case(a, b) -> bool:
    if (a.target, a.how, a.tag, a.label, len(a.args)) != (
        b.target,
        b.how,
        b.tag,
        b.label,
        len(b.args),
    ):
        return False
    return all(
        np.array_equal(p, q) if isinstance(p, np.ndarray) else p == q
        for p, q in zip(a.args, b.args, strict=True)
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_hidden_battery_starts_with_the_visible_cases(assignment):
    """What a student's visible check passed is run again at autograde, case for case."""
    for grade_id, spec in CHECKS[assignment].items():
        own = own_variant(spec)
        visible = spec.make_cases(hidden=False, **own)
        hidden = spec.make_cases(hidden=True, **own)
        assert len(hidden) >= len(visible), grade_id
        assert all(
            _same_case(a, b) for a, b in zip(visible, hidden[: len(visible)], strict=True)
        ), grade_id


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_solutions_pass_every_check(assignment):
    namespace = run_in_process(read(source_path(assignment)))
    failed = {gid: v for gid, v in verdicts(assignment, namespace).items() if not v.passed}
    assert failed == {}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_unfilled_release_fails_every_check_as_not_written(assignment):
    namespace = run_in_process(read(release_path(assignment)))
    for verdict in verdicts(assignment, namespace).values():
        assert verdict.category == NOT_WRITTEN, verdict
        assert "not written yet" in verdict.message or "is not defined" in verdict.message


# the bank's planted bugs that are no mutant's: a mutant's run proves the same of its bug
# (test_mutants.py), cell by cell, with the hidden tests in the notebook
BUGS = [
    (a, name)
    for a, bank in BANK.items()
    for name, (edits, lost) in bank.items()
    if not is_a_mutant(a, edits, lost)
]


@pytest.mark.parametrize(("assignment", "bug"), BUGS, ids=[f"{a}:{b}" for a, b in BUGS])
def test_planted_bug_loses_exactly_its_cells_each_to_its_misconception(assignment, bug):
    edits, expected = BANK[assignment][bug]
    namespace = run_in_process(with_bug(read(source_path(assignment)), edits))
    failed = {gid: v for gid, v in verdicts(assignment, namespace).items() if not v.passed}
    assert set(failed) == expected
    # a cell is not judged when its function hands its work to a library (its reuse cell
    # fails) or another failing cell hides its choice ("fix axis first"): it names that cell
    for gid, verdict in failed.items():
        if verdict.category == NOT_JUDGED:
            assert any(other in verdict.message for other in failed if other != gid), verdict
        else:
            assert verdict.category == CHECKS[assignment][gid].category, (gid, verdict)
    voided = {
        other.grade_id
        for gid in failed
        if CHECKS[assignment][gid].voids
        for other in cells_of(CHECKS[assignment][gid])
        if other.grade_id != gid
    }
    assert all(failed[gid].category == NOT_JUDGED for gid in voided)


def test_a_planted_bug_message_names_the_misconception_with_evidence():
    edits, _ = BANK[PS2.axis.assignment]["keepdims-and-wrong-axis"]
    namespace = run_in_process(with_bug(read(source_path(PS2.axis.assignment)), edits))
    verdict = verdict_of(PS2.independence, namespace)
    assert verdict.category == PS2.independence.category
    assert verdict.message.startswith("Independence: changing record (")
    assert "your statistics cross the batch axis" in verdict.message
    shape = verdict_of(PS2.stats_shape, namespace).message
    assert "keepdims" in shape and "(2,)" in shape


def test_a_function_with_state_is_told_about_its_state():
    """State leaks into every later call, so it is not in the bank; its message names it."""
    running: dict = {}

    def layer_norm(x, gamma, beta, eps=1e-5):
        mu = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        if var.shape in running:
            var = 0.5 * var + 0.5 * running[var.shape]
        running[var.shape] = var
        return gamma * (x - mu) / np.sqrt(var + eps) + beta

    verdict = verdict_of(PS2.independence, {"layer_norm": layer_norm})
    assert verdict.category == PS2.independence.category
    assert "keeps state between calls" in verdict.message


def test_a_gradient_returned_nested_is_named_whole_and_a_list_of_three_passes():
    """`return dx, (dgamma, dgamma), dbeta` gets the whole returned type in its message, its
    long parts in words."""

    def nested(dy, x, gamma, eps=1e-5):
        return np.zeros_like(x), (np.zeros_like(gamma), np.zeros_like(gamma)), np.zeros_like(gamma)

    def as_list(dy, x, gamma, eps=1e-5):
        return [np.zeros_like(x), np.zeros_like(gamma), np.zeros_like(gamma)]

    verdict = verdict_of(PS5.dtype_and_shape, {"layer_norm_backward": nested})
    assert verdict.message == (
        "Type: layer_norm_backward must return three NumPy arrays (dx, dgamma, dbeta); it "
        "returned tuple(numpy.ndarray, tuple of 2 arrays, numpy.ndarray) (x of shape (4, 6))."
    )
    assert verdict_of(PS5.dtype_and_shape, {"layer_norm_backward": as_list}).passed


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_headings_give_the_points_of_the_cells_under_them(assignment):
    """'# Problem set ... (25 points)' and '## Part A ... (6 points)' add up to the grade cells."""
    nb = read(source_path(assignment))
    title, parts, current = None, {}, None
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown" and not meta.get("grade"):
            for line in cell.source.splitlines():
                found = re.match(r"^(#{1,2}) (.*)\((\d+) points", line)
                if found and found.group(1) == "#":
                    title = int(found.group(3))
                elif found:
                    current = found.group(2)
                    parts[current] = [int(found.group(3)), 0]
        if meta.get("grade"):
            parts[current][1] += meta["points"]
    assert parts and all(stated == counted for stated, counted in parts.values()), parts
    assert title == sum(counted for _, counted in parts.values())


def _no_eps_and_too_large(axes):
    """A normalization without eps, 1.5 times too large: it matches no member of the family."""

    def norm(x, gamma, beta=None, eps=1e-5):
        centred = x - x.mean(axis=axes, keepdims=True) if beta is not None else x
        scale = np.sqrt((centred * centred).mean(axis=axes, keepdims=True))
        return 1.5 * gamma * centred / scale + (0.0 if beta is None else beta)

    return norm


@pytest.mark.parametrize(
    ("spec", "axes", "zero"),
    [
        (PS2.eps_placement, -1, "a record of zero variance must give beta"),
        (PS3.bn_eps_placement, 0, "a feature of zero variance must give beta"),
        (PS4.rms_eps, -1, "a record of zero mean square must give 0,"),
    ],
    ids=lambda value: getattr(value, "grade_id", None),
)
def test_the_eps_fallback_says_what_a_zero_statistic_gives_for_each_norm(spec, axes, zero):
    """No member of the family matches and a constant record gives NaN: the property branch."""
    (name,) = spec.targets
    norm = _no_eps_and_too_large(axes)
    if name == "rms_norm":
        norm = partial(_rms_call, norm)
    verdict = verdict_of(spec, {name: norm})
    assert verdict.category == spec.category
    assert verdict.message.startswith("eps: for ") and zero in verdict.message, verdict.message


def _rms_call(norm, x, gamma, eps=1e-6):
    return norm(x, gamma, None, eps)


def _no_keepdims_ln(x, gamma, beta, eps=1e-5):
    x = np.asarray(x, dtype=np.float64)
    return gamma * (x - x.mean(axis=-1)) / np.sqrt(x.var(axis=-1) + eps) + beta


def _no_keepdims_rms(x, gamma, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    return gamma * x / np.sqrt((x * x).mean(axis=-1) + eps)


@pytest.mark.parametrize(
    ("spec", "fn"),
    [(PS2.eps_placement, _no_keepdims_ln), (PS4.rms_eps, _no_keepdims_rms)],
    ids=lambda value: getattr(value, "grade_id", None),
)
def test_a_missing_keepdims_on_a_square_input_is_named_never_blamed_on_eps(spec, fn):
    """The eps cell's first case is square (6, 6): statistics without keepdims broadcast
    there without an error, and the cell says so, in a category of its own."""
    (target,) = spec.targets
    square = spec.make_cases(0, hidden=False)[0]
    assert square.args[0].shape == (6, 6)
    verdict = verdict_of(spec, {target: fn})
    assert verdict.category == "missing_keepdims"
    assert verdict.message.endswith("lost their last axis (missing keepdims)")
    assert "eps" not in verdict.message
    alone = judge_battery(spec, partial(run_case, {target: fn}))  # its cause in full
    assert alone.message.startswith("Missing keepdims: for records of variance 1e-6 and 0,")


def test_a_missing_keepdims_elsewhere_is_named_in_numpys_broadcast_error():
    verdict = verdict_of(PS2.axis, {"layer_norm": _no_keepdims_ln})
    assert verdict.category == "crashed"
    assert "could not be broadcast together with shapes (3,5) (3,) (" in verdict.message
    assert verdict.message.endswith(
        "Missing keepdims: a statistic over the last axis has shape (3,), one value per record, "
        "and no longer lines up with the records of shape (3, 5); keep the axis with "
        "keepdims=True (or mean[..., None])."
    )


def test_a_layer_norm_returning_lists_is_named_briefly():
    def as_lists(x, gamma, beta, eps=1e-5):
        x = np.asarray(x, dtype=np.float64)
        mu, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        return ((x - mu) / np.sqrt(var + eps) * gamma + beta).tolist()

    verdict = verdict_of(PS2.axis, {"layer_norm": as_lists})
    assert verdict.message == (
        "layer_norm returned list of 3 lists of floats, not an array (a 2-D input of shape (3, 5))."
    )


@pytest.mark.parametrize(
    ("output_type", "shown"),
    [
        ("numpy.ndarray", "numpy.ndarray"),
        ("tuple(numpy.ndarray, numpy.ndarray)", "tuple(numpy.ndarray, numpy.ndarray)"),
        ("list(list(float, float, float), list(float, float, float))", "list of 2 lists of floats"),
        ("tuple(" + ", ".join(["numpy.ndarray"] * 5) + ")", "tuple of 5 arrays"),
        (
            "tuple(numpy.ndarray, list(float, float, float, float, float, float), float)",
            "tuple(numpy.ndarray, list of 6 floats, float)",
        ),
    ],
)
def test_a_long_type_is_shown_in_words(output_type, shown):
    assert brief_type(output_type) == shown


@pytest.mark.parametrize(
    "output_type",
    ["list(" + ", ".join(["W)("] * 12) + ")", ")" * 50, "(" * 50, "(" * 5000, "list(list(a, b" * 9],
    ids=["brackets in names", "closing only", "opening only", "5000 deep", "never closed"],
)
def test_a_type_named_by_a_hostile_class_is_still_shown(output_type):
    """A student's class may set its __qualname__ to anything (unbalanced brackets, deep
    nesting): the type is shown in at most 80 characters, and judging goes on."""
    shown = brief_type(output_type)
    assert isinstance(shown, str) and len(shown) <= 80
