"""The oracle is the judges' one seam to expectations, asked only what each check declares.

A student download (issue 19) runs every visible check with no answer inside, from the
answers recorded when it is built. That works because (1) nothing in `normlab.grading` reaches
the answer key but through the oracle (`recording` picks its backing), (2) each check
declares the questions its judge may ask about a case, from the case alone (never from what
the student returned), and the judge gets an oracle that refuses any other. (2)'s refusal is
tested here; that the declarations are complete is proven over the whole bank by the verdict
snapshot (`test_verdicts.py` judges through `run_check`, which declares).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from course_helpers import variant_for

from normlab.answer_key import wrong_implementations as wrong
from normlab.answer_key.live import LIVE, WRONG
from normlab.grading import CHECKS, DEFAULT_SEED, formulas, ps1_by_hand
from normlab.grading.formulas import Formula
from normlab.grading.oracle import ASK, DeclaredOracle, Question, UndeclaredQuestion, key

GRADING = Path(ps1_by_hand.__file__).parent


def _imports(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        if isinstance(node, ast.ImportFrom):
            found.add(("." * node.level) + (node.module or ""))
    return found


def test_nothing_in_the_checks_reaches_the_answer_key_or_torch_but_through_recording():
    for path in sorted(GRADING.rglob("*.py")):
        reached = {
            name
            for name in _imports(ast.parse(path.read_text(encoding="utf-8")))
            if "answer_key" in name or name.split(".")[0] == "torch"
        }
        if path.name == "recording.py":  # the one switch: the answer key, or a recording
            assert reached == {
                "..answer_key.live",
                "..answer_key.trusted",
                "..answer_key.batteries",
            }
        else:
            assert not reached, f"{path.relative_to(GRADING)} reaches {reached}"


def test_the_oracle_answers_ps7s_wrong_implementations_by_name():
    x = np.random.default_rng(0).normal(size=(2, 6, 3))
    assert np.array_equal(LIVE.wrong("strided_groups", x, 3), wrong.strided_groups(x, 3))
    assert set(WRONG) == {f.__name__ for f in wrong.GROUP_NORM + wrong.BATCH_NORM_BACKWARD}


def test_a_judge_gets_what_its_check_declared_and_nothing_else():
    x = np.arange(6.0).reshape(2, 3)
    oracle = DeclaredOracle(LIVE, [ASK.statistics(x), ASK.formula_outputs(x, 1e-5)])
    same = x.copy()  # equal values are the same question
    assert np.array_equal(oracle.statistics(same)[(1,), 0][0], x.mean(axis=1))
    assert len(oracle.formula_outputs(x, 1e-5)) == len(LIVE.formula_outputs(x, 1e-5))
    for undeclared in (lambda: oracle.formula_outputs(x, 1e-3), lambda: oracle.statistics(x + 1)):
        with pytest.raises(UndeclaredQuestion, match="does not declare"):
            undeclared()


def test_questions_are_keyed_by_value_and_numpy_scalars_are_pythons():
    x = np.arange(4.0)
    a = Question("reference", ("layer_norm", x), {"eps": np.float64(1e-5)})
    b = Question("reference", ("layer_norm", x.copy()), {"eps": 1e-5})
    assert key(a) == key(b)
    assert key(a) != key(Question("reference", ("layer_norm", x + 1), {"eps": 1e-5}))
    assert key(a) != key(Question("reference", ("layer_norm", x.astype(np.float32)), {}))


def _arrays(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _arrays(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _arrays(item)
    elif isinstance(value, Question):
        yield from _arrays(value.args)
        yield from _arrays(value.kwargs)


def test_every_declared_question_is_about_a_cases_inputs():
    """The questions of every battery, visible and hidden, are about its cases' inputs (ps1's:
    the variant each case carries): what the oracle answers is fixed before any student's
    code runs."""
    asked = 0
    for assignment, specs in CHECKS.items():
        for grade_id, spec in specs.items():
            cases = spec.make_cases(DEFAULT_SEED, hidden=True, variant=variant_for(assignment))
            inputs = [np.asarray(a, dtype=np.float64) for c in cases for a in _arrays(c.args)]
            inputs += [np.asarray(a, dtype=np.float64) for c in cases for a in _arrays(c.kwargs)]
            inputs += [np.asarray(c.meta["record"], dtype=np.float64) for c in cases if spec.varies]
            for case in cases:
                for question in spec.questions(case):
                    asked += 1
                    for array in _arrays(question):
                        array = np.asarray(array, dtype=np.float64)
                        assert any(
                            array.shape == known.shape
                            and np.array_equal(array, known, equal_nan=True)
                            for known in inputs
                        ), f"{assignment}:{grade_id} declares a question about another array"
    assert asked > 500  # the family cells alone ask about every case


def test_the_live_oracle_answers_a_question_once_and_no_judge_can_change_the_answer():
    x = np.random.default_rng(3).normal(size=(3, 5))
    first = LIVE.answer(Question("formula_outputs", (x, 1e-5)))
    again = LIVE.answer(Question("formula_outputs", (x.copy(), 1e-5)))  # equal by value: kept
    assert again == first and again is not first  # each judge its own dict
    assert all(again[v] is first[v] for v in first)  # of the same arrays
    member = next(iter(first.values()))
    with pytest.raises(ValueError, match="read-only"):
        member[0, 0] = 0.0
    fresh = dict(LIVE.formula_outputs(x, 1e-5))  # not through the memo: the same numbers
    assert all(np.array_equal(fresh[v], first[v], equal_nan=True) for v in fresh)


def test_matching_finds_the_members_same_finds_in_one_comparison():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 4))
    x[0, 0, 0] = np.nan  # NaN where NaN
    outputs = LIVE.formula_outputs(x, 1e-5)
    outputs[Formula((0,), True, "n", "none")] = np.zeros(3)  # another shape matches nothing
    for y in [*list(outputs.values())[::17], np.zeros_like(x), x]:
        expected = [v for v, z in outputs.items() if formulas.same(y, z)]
        assert formulas.matching(y, outputs) == expected
    assert formulas.matching(np.zeros(5), outputs) == []
