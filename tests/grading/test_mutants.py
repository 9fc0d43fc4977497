"""The mutants (mutants.py) in process, each judged once: its graded notebook (the hidden tests
back) run cell by cell in a student's kernel (mutants.graded_once), the verdict of every check
call read from the notebook's session log. From that one run: it loses exactly its cells by
nbgrader's rule (the hidden batteries raise, which is how autograde's score follows), its
visible and hidden verdicts both lose `lost` (the same bill, issue 46), its own message names
its misconception, no message gives an answer away, and Run All reaches the summary
(test_run_all.assert_reaches_the_summary: the released notebook has no hidden checks, so the
only errors this run may raise are theirs). Each planted bug of the bank (course_bank.BANK)
that is no mutant's is graded cell by cell as nbgrader autogrades it; and every mutant whose
verdicts carry a rule across cells is a kernel witness (mutants.KERNEL_WITNESSES), graded by
plain nbgrader and the course's grader alike.

A value check (ps1's cells, ps4's parameter counts: cases that read a value) and a check of a
number the student's code returns for a scripted case (ps6's timer) must never print the
value asked for: no number in its messages rounds, to 4 significant digits, to an answer of
the notebook, nor does a fraction a/b in them. The messages looked at are those of the
verdict snapshot's bank (verdicts.json, kept equal to the live verdicts by test_verdicts.py)
and of the mutants.
"""

from __future__ import annotations

import json
import re
from functools import cache

import numpy as np
import pytest
from cells import PS1, PS4, PS6
from course_bank import BANK
from course_helpers import (
    TEST_STUDENT,
    autograded_cells,
    nbgrader_meta,
    read,
    run_in_process,
    source_path,
    variant_for,
    with_bug,
)
from in_process import run_cells, scores
from mutants import (
    KERNEL_WITNESSES,
    MUTANTS,
    PS1_MUTANTS,
    from_the_bank,
    graded_once,
    is_a_mutant,
    kernel_witnesses,
)
from test_run_all import assert_reaches_the_summary
from test_verdicts import SNAPSHOT

from normlab.grading import ASSIGNMENTS, CHECKS, DEFAULT_SEED, CheckSpec
from normlab.grading.catalog import cells_of
from normlab.grading.selfcheck import CheckFailed
from normlab.grading.verdict import NOT_JUDGED, NOT_WRITTEN, PASSED


def cases_of(spec) -> list:
    """A check's hidden battery (ps1's: the in-process student's variant)."""
    return spec.make_cases(DEFAULT_SEED, variant=variant_for(spec.assignment))


def test_every_check_has_a_mutant_of_its_misconception():
    for assignment in ASSIGNMENTS:
        held = {m.cell.grade_id for m in MUTANTS if m.assignment == assignment}
        assert set(CHECKS[assignment]) <= held, set(CHECKS[assignment]) - held


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_a_mutant_judged_once_loses_exactly_its_cells_and_reaches_the_summary(mutant):
    run = graded_once(mutant)
    checks = CHECKS[mutant.assignment]
    found = run.verdicts()
    assert {battery: set(v) for battery, v in found.items()} == dict.fromkeys(found, set(checks))
    # nbgrader's rule: a test cell that raised, wrote to stderr or left a value scores 0
    points = autograded_cells(read(source_path(mutant.assignment)))
    scored = scores(run.cells, points)
    assert set(scored) == set(points)
    assert {g for g, score in scored.items() if score != points[g]} == mutant.lost_at_grading
    # the verdicts: the visible battery's and the hidden one's lose the same cells, the bill
    # the summary gives is the grade's (issue 46)
    for battery, verdicts in found.items():
        lost = {grade_id for grade_id, verdict in verdicts.items() if not verdict.passed}
        assert lost == mutant.lost, f"{battery} battery"
    if from_the_bank(mutant):
        assert_each_cell_lost_says_why(found["hidden"], checks)
    own = found["hidden"][mutant.cell.grade_id]
    assert own.category not in (PASSED, NOT_WRITTEN), own
    assert mutant.says in own.message, own.message
    assert found["visible"][mutant.cell.grade_id].message == own.message
    for spec, wanted in answered_cells():
        if spec.assignment == mutant.assignment:
            for verdicts in found.values():
                message = verdicts[spec.grade_id].message or ""
                assert gives_away(without_labels(message, spec), wanted) == [], message
    if crosses_cells(found, checks):
        assert mutant.id in KERNEL_WITNESSES, "a rule across cells: make it a kernel witness"
    # Run All: only a hidden battery raises (the released notebook has none), with its message
    shown = {}
    for cell in run.cells:
        hidden = found["hidden"].get(cell.grade_id)
        if cell.error is not None:
            assert isinstance(cell.error, CheckFailed), (cell.grade_id, cell.error)
            assert hidden is not None and str(cell.error) == hidden.failure_text(hidden=True)
        shown[cell.grade_id] = (cell.stdout, not cell.stderr and cell.value is None)
    notes = {grade_id: verdict.note for grade_id, verdict in found["visible"].items()}
    assert_reaches_the_summary(mutant.assignment, shown, mutant.lost, notes, TEST_STUDENT)


def assert_each_cell_lost_says_why(verdicts: dict, checks: dict) -> None:
    """A planted bug of the bank (course_bank.BANK) loses each cell to that cell's own
    misconception, or "not judged" naming another failing cell; a function a failing reuse cell
    voids is not judged in any other cell."""
    failed = {grade_id: v for grade_id, v in verdicts.items() if not v.passed}
    for grade_id, verdict in failed.items():
        if verdict.category == NOT_JUDGED:
            assert any(other in verdict.message for other in failed if other != grade_id), verdict
        else:
            assert verdict.category == checks[grade_id].category, (grade_id, verdict)
    voided = {
        other.grade_id
        for grade_id in failed
        if checks[grade_id].voids
        for other in cells_of(checks[grade_id])
        if other.grade_id != grade_id
    }
    assert all(failed[grade_id].category == NOT_JUDGED for grade_id in voided)


def crosses_cells(found: dict, checks: dict) -> bool:
    """Does a verdict carry a rule across cells (`session.Session.judge`): a function voided by
    its reuse cell, "same cause as", "not judged"?"""
    for verdicts in found.values():
        for grade_id, verdict in verdicts.items():
            voided = checks[grade_id].voids and not verdict.passed
            same_cause = (verdict.message or "").startswith("same cause as ")
            if voided or same_cause or verdict.category == NOT_JUDGED:
                return True
    return False


def test_every_assignment_has_a_kernel_witness():
    assert {m.assignment for m in kernel_witnesses()} == set(ASSIGNMENTS)


BUGS = [
    (a, name)
    for a, bank in BANK.items()
    for name, (edits, lost) in bank.items()
    if not is_a_mutant(a, edits, lost)
]


@pytest.mark.parametrize(("assignment", "bug"), BUGS, ids=[f"{a}:{b}" for a, b in BUGS])
def test_a_planted_bug_graded_cell_by_cell_loses_exactly_its_points(assignment, bug):
    """The bank's planted bugs (course_bank.BANK), the source notebook edited, run as nbgrader
    autogrades it (NBGRADER_EXECUTION set: a failing check raises), by nbgrader's rule."""
    edits, expected = BANK[assignment][bug]
    points = autograded_cells(read(source_path(assignment)))
    nb = with_bug(read(source_path(assignment)), edits)
    found = scores(run_cells(nb, grading=True, student=TEST_STUDENT).cells, points)
    assert set(found) == set(points)
    assert {g for g, score in found.items() if score != points[g]} == expected


# --- no message gives an answer away -------------------------------------------------------

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?")
FRACTION = re.compile(r"(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)")


def _digits4(value: float) -> float:
    return float(f"{abs(value):.4g}")


def gives_away(message: str, answers: set[float]) -> list[str]:
    """The numbers and fractions of the message that round to one of the answers."""
    wanted = {_digits4(a) for a in answers if a != 0}
    shown = [m.group() for m in NUMBER.finditer(message)]
    shown += [f"{a}/{b}" for a, b in FRACTION.findall(message) if float(b) != 0]
    found = []
    for text in shown:
        value = eval(text) if "/" in text else float(text)  # noqa: S307 (digits and a slash)
        if _digits4(value) in wanted:
            found.append(text)
    return found


def value_answers(assignment: str) -> set[float]:
    """Every number a value cell of the assignment asks for (the source's answers)."""
    namespace = run_in_process(read(source_path(assignment)))
    found = set()
    for spec in CHECKS[assignment].values():
        for case in cases_of(spec):
            if case.how == "get":
                found |= {float(v) for v in np.ravel(namespace[case.target])}
    return found


def scripted_answers(spec) -> set[float]:
    """The numbers a check's scripted cases want (ps6's timer: the median)."""
    return {float(c.meta["want"]) for c in cases_of(spec) if "want" in c.meta}


# what a ps1 message may say of the formula (d - 1, ddof=1, gamma = 1) and the record (d = 6)
GIVENS = re.compile(r"\bd - 1\b|\bd = \d+\b|ddof=1|gamma = 1\b")


def without_labels(message: str, spec) -> str:
    """The message without its cases' labels (a label shows the case's input: ps6's scripted
    runs, of which the median is one) nor what the student is given (ps1's d, and d - 1):
    no answer."""
    for case in cases_of(spec):
        message = message.replace(case.label, "<case>") if case.label else message
    return GIVENS.sub("<given>", message)


@cache
def answered_cells() -> list[tuple[CheckSpec, set[float]]]:
    """(check, its answers) of every cell whose answer is a number."""
    cells = []
    for assignment in ASSIGNMENTS:
        values = value_answers(assignment)
        for spec in CHECKS[assignment].values():
            cases = cases_of(spec)
            if any(case.how == "get" for case in cases):
                # ps1 asks one record through: no answer of the notebook in any message
                cells.append((spec, values))
            elif scripted_answers(spec):
                cells.append((spec, scripted_answers(spec)))
    return cells


def test_the_answered_cells_are_the_value_and_timing_cells():
    named = {spec for spec, _ in answered_cells()}
    assert {spec for spec in named if spec.assignment == PS1.mean.assignment} == set(
        CHECKS[PS1.mean.assignment].values()
    )
    assert {PS4.param_counts, PS6.timing_warmup, PS6.timing_median} <= named
    assert all(answers for _, answers in answered_cells())


def test_gives_away_reads_numbers_and_fractions():
    assert gives_away("var_r = 5/4 here", {1.25}) == ["5/4"]
    assert gives_away("the mean is 2.5.", {2.5}) == ["2.5"]
    assert gives_away("about -1.3416 each", {-1.341640786}) == ["-1.3416"]
    assert gives_away("2 d_model = 1024", {1024.0}) == ["1024"]
    assert gives_away("divide by d - 1 = 3 (np.var(ddof=1))", {2.5, 1.25}) == []


def test_no_message_of_the_bank_gives_a_numeric_answer_away():
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    for spec, wanted in answered_cells():
        for name, cells in recorded.items():
            if not name.startswith(spec.assignment + "/"):
                continue
            for battery in ("visible", "hidden"):
                message = cells[spec.grade_id][battery]["message"] or ""
                shown = without_labels(message, spec)
                assert gives_away(shown, wanted) == [], f"{name} {spec.grade_id}: {message}"


def test_ps1s_cells_do_not_answer_their_questions():
    """Population or sample, where eps goes: a test cell's docstring and its check's line
    (printed under a ✗ before the question is answered) must not say."""
    nb = read(source_path(PS1.mean.assignment))
    docstrings = {
        nbgrader_meta(c)["grade_id"]: c.source.split("\n", 1)[0]
        for c in nb.cells
        if nbgrader_meta(c).get("grade") and c.cell_type == "code"
    }
    spoilers = {
        PS1.variance: ("population", "sample", "d - 1", "divide"),
        PS1.eps_effect: ("inside", "outside", "square root", "var"),  # var_r, the variance
        PS1.param_counts: ("2 d", "d_model", "bias"),
    }
    for spec, words in spoilers.items():
        for text in (docstrings[spec.grade_id], spec.summary):
            assert not [w for w in words if w in text.lower()], text
    values = value_answers(PS1.mean.assignment)
    checks = CHECKS[PS1.mean.assignment]
    for grade_id, text in docstrings.items():
        assert gives_away(text + " " + checks[grade_id].summary, values) == [], text


def test_ps1s_table_holds_the_typical_wrong_answers():
    """The issue's list: std for variance, sum/(d - 1), uncentred mean of squares, rounded,
    eps added to the output, eps outside the root, wrong eps, sample variance, wrong counts."""
    names = {m.name for m in PS1_MUTANTS}
    assert {
        "std for variance",
        "sum divided by d - 1",
        "uncentred mean of squares",
        "normalized rounded",
        "eps added to the output",
        "eps outside the root",
        "wrong eps",
        "sample variance",
        "gain only for gain and bias",
    } <= names
