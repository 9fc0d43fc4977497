"""The mutants (mutants.py) in-process: each loses exactly its cells, the visible battery sees
what the hidden one sees, and no message gives an answer away.

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
from course_helpers import nbgrader_meta, read, run_in_process, source_path
from mutants import MUTANTS, PS1, answers, released_with
from test_verdicts import SNAPSHOT

from normlab.answer_key.oracle import LIVE
from normlab.grading import ASSIGNMENTS, CHECKS, DEFAULT_SEED, run_case, run_check
from normlab.grading.verdict import NOT_WRITTEN, PASSED


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
    with np.errstate(all="ignore"):
        for grade_id, spec in CHECKS[mutant.assignment].items():
            for battery in found:
                hidden = battery == "hidden"
                found[battery][grade_id] = run_check(spec, run_one, hidden=hidden, oracle=LIVE)
    return found


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
        for case in spec.make_cases(DEFAULT_SEED):
            if case.how == "get":
                found |= {float(v) for v in np.ravel(namespace[case.target])}
    return found


def scripted_answers(spec) -> set[float]:
    """The numbers a check's scripted cases want (ps6's timer: the median)."""
    return {float(c.meta["want"]) for c in spec.make_cases(DEFAULT_SEED) if "want" in c.meta}


def without_labels(message: str, spec) -> str:
    """The message without its cases' labels: a label shows the case's input (ps6's scripted
    runs, of which the median is one), which is no answer."""
    for case in spec.make_cases(DEFAULT_SEED):
        message = message.replace(case.label, "<case>") if case.label else message
    return message


@cache
def answered_cells() -> list[tuple[str, str, set[float]]]:
    """(assignment, grade_id, its answers) of every cell whose answer is a number."""
    cells = []
    for assignment in ASSIGNMENTS:
        values = value_answers(assignment)
        for grade_id, spec in CHECKS[assignment].items():
            cases = spec.make_cases(DEFAULT_SEED)
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
        "population_variance": ("population", "sample", "d - 1", "divide"),
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
    """The issue's list: std for variance, sum/3, uncentred mean of squares, rounded, eps
    added to the output, eps outside the root, wrong eps, sample variance, wrong counts."""
    names = {m.name for m in PS1}
    assert {
        "std for variance",
        "sum divided by d - 1",
        "uncentred mean of squares",
        "mean rounded",
        "eps added to the output",
        "eps outside the root",
        "wrong eps",
        "sample variance",
        "gain only for gain and bias",
    } <= names
