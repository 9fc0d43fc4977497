"""The mutants (mutants.py) in-process: each loses exactly its cells, the visible battery sees
what the hidden one sees, and no message gives an answer away; its whole notebook, run cell
by cell as nbgrader autogrades it (in_process.py), loses exactly those cells, the hidden
battery's included, as does each planted bug of the bank (course_bank.BANK); and every
mutant whose verdicts carry a rule across cells is a kernel witness
(mutants.KERNEL_WITNESSES), graded by plain nbgrader and the course's grader alike.

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
from functools import cache, partial

import numpy as np
import pytest
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
from in_process import graded, run_cells, scores
from mutants import (
    KERNEL_WITNESSES,
    MUTANTS,
    PS1,
    answers,
    kernel_witnesses,
    released_with,
    run_as_students,
)
from test_verdicts import SNAPSHOT

from normlab.answer_key.backing import LIVE
from normlab.grading import ASSIGNMENTS, CHECKS, DEFAULT_SEED, run_case, run_check
from normlab.grading.verdict import NOT_JUDGED, NOT_WRITTEN, PASSED

# the mutants' in-process verdicts are computed once per worker (`_verdicts`): this module and
# test_run_all.py, which reads them, run on one worker
pytestmark = pytest.mark.xdist_group("mutant-verdicts")


def mutant_namespace(mutant) -> dict:
    """The mutant's notebook (the release, its answer cells filled) run in this process."""
    return run_in_process(released_with(mutant.assignment, answers(mutant)))


def verdicts_of(mutant) -> dict[str, dict]:
    """battery ("visible", "hidden") -> grade_id -> Verdict, for every check of the mutant."""
    return _verdicts(mutant.id)


@cache
def _verdicts(mutant_id: str) -> dict[str, dict]:
    mutant = next(m for m in MUTANTS if m.id == mutant_id)
    namespace = mutant_namespace(mutant)
    found = {"visible": {}, "hidden": {}}
    run_one = partial(run_case, namespace, owners=namespace)
    variant = variant_for(mutant.assignment)
    with np.errstate(all="ignore"):
        for grade_id, spec in CHECKS[mutant.assignment].items():
            for battery in found:
                hidden = battery == "hidden"
                verdict = run_check(spec, run_one, hidden=hidden, oracle=LIVE, variant=variant)
                found[battery][grade_id] = verdict
    return found


def cases_of(spec) -> list:
    """A check's hidden battery (ps1's: the in-process student's variant)."""
    return spec.make_cases(DEFAULT_SEED, variant=variant_for(spec.assignment))


def test_every_check_has_a_mutant_of_its_misconception():
    for assignment in ASSIGNMENTS:
        held = {m.cell for m in MUTANTS if m.assignment == assignment}
        assert set(CHECKS[assignment]) <= held, set(CHECKS[assignment]) - held


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_a_mutant_loses_exactly_its_cells_and_no_message_gives_an_answer_away(mutant):
    found = verdicts_of(mutant)
    for battery, verdicts in found.items():
        lost = {grade_id for grade_id, verdict in verdicts.items() if not verdict.passed}
        hidden = mutant.hidden_also if battery == "hidden" else frozenset()
        assert lost == mutant.lost | hidden, f"{battery} battery"
    own = found["hidden"][mutant.cell]
    assert own.category not in (PASSED, NOT_WRITTEN), own
    assert mutant.says in own.message, own.message
    assert found["visible"][mutant.cell].message == own.message  # the visible cases come first
    for assignment, grade_id, wanted in answered_cells():
        if assignment == mutant.assignment:
            for verdicts in found.values():
                message = verdicts[grade_id].message or ""
                shown = without_labels(message, CHECKS[assignment][grade_id])
                assert gives_away(shown, wanted) == [], message


# --- no message gives an answer away -------------------------------------------------------

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?")
FRACTION = re.compile(r"(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)")


@pytest.mark.parametrize("mutant", run_as_students(), ids=lambda m: m.id)
def test_a_mutant_graded_cell_by_cell_loses_exactly_its_cells(mutant):
    """nbgrader's rule on the notebook it grades: a test cell that raises or writes to stderr
    scores 0, every other keeps its points."""
    points = autograded_cells(read(source_path(mutant.assignment)))
    nb = graded(released_with(mutant.assignment, answers(mutant)), mutant.assignment)
    found = scores(run_cells(nb, grading=True, student=TEST_STUDENT), points)
    assert set(found) == set(points)
    assert {g for g, score in found.items() if score != points[g]} == mutant.lost_at_grading


def is_a_mutant(assignment: str, edits, lost) -> bool:
    """Is a planted bug a mutant's (ps3 Part C's, ps7's and ps8's are made from the bank),
    with the same cells lost? It is then graded cell by cell as that mutant."""
    return any(
        m.assignment == assignment and m.edits == tuple(edits) and m.lost_at_grading == lost
        for m in run_as_students()
    )


BUGS = [
    (a, name)
    for a, bank in BANK.items()
    for name, (edits, lost) in bank.items()
    if not is_a_mutant(a, edits, lost)
]


@pytest.mark.parametrize(("assignment", "bug"), BUGS, ids=[f"{a}:{b}" for a, b in BUGS])
def test_a_planted_bug_graded_cell_by_cell_loses_exactly_its_points(assignment, bug):
    """The bank's planted bugs (course_bank.BANK), the source notebook edited, by the same
    rule."""
    edits, expected = BANK[assignment][bug]
    points = autograded_cells(read(source_path(assignment)))
    nb = with_bug(read(source_path(assignment)), edits)
    found = scores(run_cells(nb, grading=True, student=TEST_STUDENT), points)
    assert set(found) == set(points)
    assert {g for g, score in found.items() if score != points[g]} == expected


def crosses_cells(mutant) -> bool:
    """Does a verdict of the mutant carry a rule across cells (`selfcheck.run_check`)?"""
    for verdicts in verdicts_of(mutant).values():
        for grade_id, verdict in verdicts.items():
            voided = CHECKS[mutant.assignment][grade_id].voids and not verdict.passed
            same_cause = (verdict.message or "").startswith("same cause as ")
            if voided or same_cause or verdict.category == NOT_JUDGED:
                return True
    return False


def test_every_mutant_with_a_rule_across_cells_is_a_kernel_witness():
    across = {m.id for m in run_as_students() if crosses_cells(m)}
    assert across <= set(KERNEL_WITNESSES), sorted(across - set(KERNEL_WITNESSES))
    assert {m.assignment for m in kernel_witnesses()} == set(ASSIGNMENTS)


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
def answered_cells() -> list[tuple[str, str, set[float]]]:
    """(assignment, grade_id, its answers) of every cell whose answer is a number."""
    cells = []
    for assignment in ASSIGNMENTS:
        values = value_answers(assignment)
        for grade_id, spec in CHECKS[assignment].items():
            cases = cases_of(spec)
            if any(case.how == "get" for case in cases):
                # ps1 asks one record through: no answer of the notebook in any message
                cells.append((assignment, grade_id, values))
            elif scripted_answers(spec):
                cells.append((assignment, grade_id, scripted_answers(spec)))
    return cells


def test_the_answered_cells_are_the_value_and_timing_cells():
    named = {(a, g) for a, g, _ in answered_cells()}
    assert {(a, g) for a, g in named if a == "ps1_by_hand"} == {
        ("ps1_by_hand", g) for g in CHECKS["ps1_by_hand"]
    }
    assert ("ps4_rmsnorm", "param_counts") in named
    assert {("ps6_stability_speed", "timing_warmup"), ("ps6_stability_speed", "timing_median")} <= (
        named
    )
    assert all(answers for _, _, answers in answered_cells())


def test_gives_away_reads_numbers_and_fractions():
    assert gives_away("var_r = 5/4 here", {1.25}) == ["5/4"]
    assert gives_away("the mean is 2.5.", {2.5}) == ["2.5"]
    assert gives_away("about -1.3416 each", {-1.341640786}) == ["-1.3416"]
    assert gives_away("2 d_model = 1024", {1024.0}) == ["1024"]
    assert gives_away("divide by d - 1 = 3 (np.var(ddof=1))", {2.5, 1.25}) == []


def test_no_message_of_the_bank_gives_a_numeric_answer_away():
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    for assignment, grade_id, wanted in answered_cells():
        for name, cells in recorded.items():
            if not name.startswith(assignment + "/"):
                continue
            for battery in ("visible", "hidden"):
                message = cells[grade_id][battery]["message"] or ""
                shown = without_labels(message, CHECKS[assignment][grade_id])
                assert gives_away(shown, wanted) == [], f"{name} {grade_id}: {message}"


def test_ps1s_cells_do_not_answer_their_questions():
    """Population or sample, where eps goes: a test cell's docstring and its check's line
    (printed under a ✗ before the question is answered) must not say."""
    nb = read(source_path("ps1_by_hand"))
    docstrings = {
        nbgrader_meta(c)["grade_id"]: c.source.split("\n", 1)[0]
        for c in nb.cells
        if nbgrader_meta(c).get("grade") and c.cell_type == "code"
    }
    spoilers = {
        "variance": ("population", "sample", "d - 1", "divide"),
        "eps_effect": ("inside", "outside", "square root", "variance"),
        "param_counts": ("2 d", "d_model", "bias"),
    }
    checks = CHECKS["ps1_by_hand"]
    for grade_id, words in spoilers.items():
        for text in (docstrings[grade_id], checks[grade_id].summary):
            assert not [w for w in words if w in text.lower()], text
    values = value_answers("ps1_by_hand")
    for grade_id, text in docstrings.items():
        assert gives_away(text + " " + checks[grade_id].summary, values) == [], text


def test_ps1s_table_holds_the_typical_wrong_answers():
    """The issue's list: std for variance, sum/(d - 1), uncentred mean of squares, rounded,
    eps added to the output, eps outside the root, wrong eps, sample variance, wrong counts."""
    names = {m.name for m in PS1}
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
