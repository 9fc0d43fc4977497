"""The grading package's shared vocabulary: verdicts, judge shapes, the spec factory, check
resolution."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from cells import PS1, PS2

from normlab.answer_key import batteries
from normlab.answer_key.live import LIVE
from normlab.answer_key.random_inputs import messy, rng_for
from normlab.grading import Case, Result, Verdict, backing, judges, selfcheck
from normlab.grading.evidence import (
    amount,
    arrays_output,
    failure_of_call,
    first_beyond,
    first_index,
)
from normlab.grading.session import CheckerError, judge_battery
from normlab.grading.spec import check_spec, registry
from normlab.grading.verdict import CRASHED, NOT_WRITTEN, PASS, as_verdict
from normlab_sandbox import student_variant


def _case(tag: str) -> Case:
    return Case("f", args=(np.zeros(2),), tag=tag, label=f"case {tag}")


def _read_number(case, result):
    if result.error:
        return None, f"problem in {case.tag}"
    return result.output, None


def _big(seen):
    return f"{seen.case.tag} is {seen.value}" if seen.value > 1 else None


CASES = [_case("a"), _case("b"), _case("c")]


def test_each_case_reads_then_judges_and_the_first_problem_wins():
    judge = judges.each_case(_read_number, _big)
    assert judge(CASES, [Result(output=0), Result(output=1), Result(output=0)], LIVE) is None
    assert judge(CASES, [Result(output=0), Result(output=5), Result(output=7)], LIVE) == "b is 5"
    # a case that cannot be read stops the judge at that case, before later verdicts
    failed = Result(error=("ValueError", "no"))
    assert judge(CASES, [Result(output=0), failed, Result(output=7)], LIVE) == "problem in b"
    assert judge(CASES, [Result(output=9), failed, Result(output=7)], LIVE) == "a is 9"


def test_each_case_without_a_verdict_only_reads():
    judge = judges.each_case(_read_number)
    assert judge(CASES, [Result(output=9)] * 3, LIVE) is None
    broken = [Result(output=9), Result(error=("E", "")), Result()]
    assert judge(CASES, broken, LIVE) == "problem in b"


def test_each_case_refuses_cases_and_results_of_different_lengths():
    with pytest.raises(ValueError):
        judges.each_case(_read_number)(CASES, [Result(output=0)], LIVE)


def test_each_pair_judges_the_second_call_by_the_first():
    seen = []

    def rule(one):
        seen.append((one.case.tag, one.first, one.value))
        return "grew" if one.value > one.first else None

    judge = judges.each_pair(_read_number, rule)
    pairs = [_case("a1"), _case("a2"), _case("b1"), _case("b2")]
    outputs = [Result(output=v) for v in (1, 1, 2, 3)]
    assert judge(pairs, outputs, LIVE) == "grew"
    assert seen == [("a2", 1, 1), ("b2", 2, 3)]
    broken = [Result(output=1), Result(error=("E", "")), Result(output=2), Result(output=3)]
    assert judge(pairs, broken, LIVE) == "problem in a2"


def test_read_all_gives_every_value_or_the_first_problem():
    results = [Result(output=v) for v in (1, 2, 3)]
    assert judges.read_all(_read_number, CASES, results) == ([1, 2, 3], None)
    results[2] = Result(error=("E", ""))
    results[1] = Result(error=("E", ""))
    assert judges.read_all(_read_number, CASES, results) == (None, "problem in b")


def test_returned_reads_the_output_or_the_failure_of_the_call():
    case = Case("layer_norm", args=(np.zeros(3),), label="a record of 3")
    assert judges.returned(case, Result(output=4)) == (4, None)
    value, problem = judges.returned(case, Result(error=("NotImplementedError", "")))
    assert value is None and problem.category == NOT_WRITTEN
    assert problem.message.startswith("layer_norm is not written yet")


@pytest.mark.parametrize(
    ("case", "result", "category"),
    [
        (Case("f", "get"), Result(output=..., output_type="ellipsis"), NOT_WRITTEN),
        (Case("f", "get"), Result(error=("NameError", "name 'f' is not defined")), NOT_WRITTEN),
        (Case("f"), Result(error=("NameError", "name 'f' is not defined")), NOT_WRITTEN),
        (Case("f"), Result(error=("NotImplementedError", "")), NOT_WRITTEN),
        (Case("f"), Result(error=("NameError", "name 'mu' is not defined")), CRASHED),
        (Case("f"), Result(error=("ValueError", "operands could not be broadcast")), CRASHED),
    ],
)
def test_a_failed_call_is_not_written_or_crashed_by_what_failed(case, result, category):
    assert failure_of_call("f", case, result).category == category
    assert failure_of_call("f", case, Result(output=1.0, output_type="float")) is None


def test_a_verdict_passes_without_a_message_and_fails_with_one():
    assert PASS.passed and as_verdict(None, "wrong_axis") is PASS
    assert as_verdict("Wrong axis: ...", "wrong_axis") == Verdict("wrong_axis", "Wrong axis: ...")
    crashed = Verdict(CRASHED, "f raised ValueError")
    assert as_verdict(crashed, "wrong_axis") is crashed and not crashed.passed
    with pytest.raises(ValueError):
        Verdict("wrong_axis")
    with pytest.raises(ValueError):
        Verdict("passed", "but with a message")


def test_arrays_output_reads_a_tuple_of_arrays_or_names_what_came_back():
    case = Case("f", args=(np.zeros((2, 3)),), label="x")
    parts, shapes = ("dx", "dw"), ((2, 3), (3,))
    good = Result(output=(np.ones(6), [1, 2, 3]), output_type="tuple(numpy.ndarray, list)")
    (dx, dw), problem = arrays_output("f", case, good, parts, shapes=shapes)
    assert problem is None and dx.shape == (2, 3) and dw.dtype == np.float64
    single = Result(output=np.ones(3), output_type="numpy.ndarray")
    assert arrays_output("f", case, single, parts)[1] == (
        "f must return two arrays, (dx, dw); it returned numpy.ndarray (x)."
    )
    words = Result(output=("a", "b"), output_type="tuple(str, str)")
    assert arrays_output("f", case, words, parts)[1] == (
        "f returned tuple(str, str), not two arrays (x)."
    )
    short = Result(output=(np.ones(6), np.ones(2)), output_type="tuple")
    assert arrays_output("f", case, short, parts, shapes=shapes)[1] == (
        "dw has shape (2,) for x; it should have shape (3,)."
    )
    crashed = Result(error=("ValueError", "no"))
    assert arrays_output("f", case, crashed, parts)[1].category == CRASHED


def test_an_array_reads_a_float64_array_of_the_inputs_shape():
    case = Case("layer_norm", args=(np.zeros((2, 3)),), label="x")
    value, problem = judges.an_array(case, Result(output=np.ones((2, 3), dtype=np.float32)))
    assert problem is None and value.dtype == np.float64 and value.shape == (2, 3)
    _, problem = judges.an_array(case, Result(output=np.ones(3)))
    assert "shape (3,)" in problem


def _draw(rng, hidden):
    return [Case("f", args=(rng.normal(size=3),)) for _ in range(2 if hidden else 1)]


class Drawn:
    """A backing whose every battery is `_draw`, on the check's own stream as the answer key
    draws one (`normlab.answer_key.batteries.cases`); the live oracle answers."""

    def cases(self, spec, seed, hidden, variant):
        if spec.grade_id == "unbound":
            return batteries.cases(spec, seed, hidden, variant)  # the answer key's own lookup
        return _draw(rng_for(seed, spec.salt), hidden)

    answer, resolve, unanswered = LIVE.answer, LIVE.resolve, LIVE.unanswered


@pytest.fixture
def drawn(monkeypatch):
    monkeypatch.setattr(backing, "current", Drawn)


def test_a_battery_draws_its_checks_own_stream_and_the_visible_cases_first(drawn):
    spec = check_spec(
        "cell", "f", judges.each_case(judges.returned), "s", misconception="m", points=2
    )
    assert spec.targets == ("f",) and spec.points == 2 and spec.category == "cell"
    visible, hidden = spec.make_cases(0, hidden=False), spec.make_cases(0)
    assert len(visible) == 1 and len(hidden) == 2
    np.testing.assert_array_equal(visible[0].args[0], hidden[0].args[0])
    other = _spec("other").make_cases(0)
    assert not np.array_equal(other[0].args[0], hidden[0].args[0])
    salted = _spec("other", salt="cell").make_cases(0)
    np.testing.assert_array_equal(salted[0].args[0], hidden[0].args[0])
    np.testing.assert_array_equal(hidden[0].args[0], rng_for(0, "cell").normal(size=3))
    with pytest.raises(LookupError, match="no battery for"):
        _spec("unbound").make_cases(0)


def _spec(grade_id, judge=None, points=1, **options):
    return check_spec(grade_id, "f", judge, "s", misconception="m", points=points, **options)


def test_a_bare_message_names_the_cells_category_and_a_verdict_keeps_its_own():
    cases = _draw(rng_for(0, "x"), False)
    worded = _spec("eps_placement", lambda cases, results, oracle: "eps outside")
    assert worded.judge(cases, [Result()], LIVE) == Verdict(worded.grade_id, "eps outside")
    finer = _spec("axis", lambda cases, results, oracle: "axis 0", category="batch_axis")
    assert finer.judge(cases, [Result()], LIVE).category == "batch_axis"
    crashed = Verdict(CRASHED, "f raised KeyError")
    assert _spec("axis", lambda *args: crashed).judge(cases, [Result()], LIVE) is crashed
    assert _spec("axis", lambda *args: None).judge(cases, [Result()], LIVE).passed


def test_registry_refuses_a_duplicate_id_and_a_cell_worth_nothing():
    one = _spec("a")
    assert list(registry("ps_test", one)) == ["a"] and one.assignment == "ps_test"
    with pytest.raises(ValueError, match="share the grade_id 'a'"):
        registry("ps_test", one, one)
    with pytest.raises(ValueError, match="worth no points"):
        registry("ps_test", _spec("b", points=0))
    with pytest.raises(ValueError, match="ps_test's already"):
        registry("ps_other", one)
    with pytest.raises(TypeError, match="the assignment's id"):
        registry(_spec("c"))


def test_messy_records_differ_in_scale_and_offset():
    x = messy(rng_for(0, "messy"), (50, 8))
    stds = x.std(axis=-1)
    assert x.shape == (50, 8) and stds.max() / stds.min() > 10
    assert np.abs(x.mean(axis=-1)).max() > 3 * np.median(stds)


def test_find_check_looks_the_cell_up_and_counts_its_targets():
    axis, counts = PS2.axis, PS1.param_counts
    assert selfcheck.find_check(axis.assignment, axis.grade_id, 1) is axis
    with pytest.raises(KeyError):
        selfcheck.find_check(axis.assignment, "no_such_cell", 1)
    with pytest.raises(KeyError):
        selfcheck.find_check("ps_unknown", axis.grade_id, 1)
    with pytest.raises(TypeError, match=rf"check\('{counts.grade_id}'\) reads 3 value\(s\)"):
        selfcheck.find_check(counts.assignment, counts.grade_id, 1)


# the paper's worked record as a variant of ps1 (Ba, Kiros and Hinton, 2016): mean 2.5
PAPER = {"slot": 0, "record": [1.0, 2.0, 3.0, 4.0], "d_model": 512}


def test_run_check_runs_each_case_and_judges():
    spec = PS1.mean
    ran = []

    def run_one(case):
        ran.append(case.target)
        return Result(output=2.5, output_type="float")

    assert selfcheck.run_check(spec, run_one, variant=PAPER) is PASS
    assert ran == ["mean_r"]
    wrong = selfcheck.run_check(
        spec, lambda case: Result(output=3.25, output_type="float"), variant=PAPER
    )
    assert wrong.category == spec.category
    assert wrong.message.startswith("mean_r is not the mean of r")
    assert "d = 4 features" in wrong.message  # the message follows the variant


def test_a_check_of_a_variant_without_one_asks_who_the_student_is():
    spec = PS1.mean
    asked = judge_battery(spec, lambda case: Result(output=2.5), variant=None)
    assert asked.category == NOT_WRITTEN and student_variant.NOT_KNOWN in asked.message


def test_run_check_judges_with_the_oracle_it_is_given():
    """The oracle is the one seam for expectations: ps1's eps cell asks it for LayerNorm."""
    spec = PS1.eps_effect
    answer = Result(output=np.array([-1.0, 0.0, 0.0, 1.0]), output_type="numpy.ndarray")

    class Replay:
        """LIVE, but LayerNorm with eps = 1e-5 is [-1, 0, 0, 1]."""

        asked: list = []

        def answer(self, question):
            self.asked.append(question.args[0])
            if question.args[0] == "layer_norm" and question.kwargs.get("eps") == 1e-5:
                return np.array([-1.0, 0.0, 0.0, 1.0])
            return LIVE.answer(question)

    run = partial(selfcheck.run_check, spec, lambda case: answer, variant=PAPER)
    assert not run().passed
    assert run(oracle=Replay()).passed
    assert "layer_norm" in Replay.asked


def test_a_battery_names_a_checker_bug_and_lets_the_runners_exceptions_through(monkeypatch):
    """judge_battery (under every Session.judge): a failure building the cases or judging is
    the course's CheckerError; the runner's own exceptions (a kernel gone) pass through."""

    def broken_cases(*args):
        raise IndexError("oops")

    def broken_judge(cases, results, oracle):
        raise ZeroDivisionError("bad")

    monkeypatch.setattr(Drawn, "cases", broken_cases)
    monkeypatch.setattr(backing, "current", Drawn)
    spec = _spec("x")
    with pytest.raises(CheckerError, match="could not build its cases: oops") as info:
        judge_battery(spec, lambda case: Result())
    assert isinstance(info.value.__cause__, IndexError)
    monkeypatch.undo()
    monkeypatch.setattr(backing, "current", Drawn)
    spec = _spec("x", broken_judge)
    with pytest.raises(CheckerError, match="could not judge: bad"):
        judge_battery(spec, lambda case: Result())

    class KernelGone(Exception):
        pass

    def gone(case):
        raise KernelGone

    with pytest.raises(KernelGone):
        judge_battery(spec, gone)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.796, "0.796"),
        (2.08, "2.08"),
        (0.0, "0"),
        (1.43e-08, "1.4e-08 (that is 0.000000014)"),
        (2.5e-4, "0.00025"),
        (9.9e-6, "9.9e-06 (that is 0.0000099)"),
    ],
)
def test_amount_writes_tiny_changes_so_they_cannot_be_read_as_large(value, shown):
    assert amount(value) == shown


def test_the_first_bad_index_is_plain_ints_in_c_order_and_nan_counts():
    mask = np.zeros((2, 3, 4), dtype=bool)
    mask[1, 0, 2] = mask[1, 2, 0] = True
    first = first_index(mask)
    assert first == (1, 0, 2)
    assert all(type(i) is int for i in first)
    assert first_index(np.zeros(5, dtype=bool)) is None
    values = np.array([[0.0, 1e-9], [np.nan, 5.0]])
    assert first_beyond(values, 1e-6) == (1, 0)
    assert first_beyond(values, np.array([1e-6, 10.0])) == (1, 0)
    assert first_beyond(np.array([[0.0, 1e-9], [0.0, 5.0]]), 1e-6) == (1, 1)
    assert first_beyond(np.zeros((2, 2)), 0.0) is None


def test_a_case_that_hides_the_choice_beside_cases_that_show_it_changes_nothing():
    """issue 46: the same rule on every battery. A cell none of whose cases can show its choice
    is not judged; one case that hides it beside cases that show it right leaves the pass (and
    its 'apart from') as the other cases give it."""
    from normlab.grading.qualified import Apart, Hidden, qualified_judge

    cells = {"axes": "the_axes_cell", "eps": "the_eps_cell"}
    said = {"shows": Apart(("axes",)), "hides": Hidden("axes", "one value each")}
    judge = qualified_judge(
        lambda case, result: (case.tag, None), lambda seen: said[seen.value], cells
    )
    both = [Case("f", tag="shows"), Case("f", tag="hides")]
    verdict = judge(both, [Result(), Result()], LIVE)
    assert verdict.passed and verdict.note == "apart from the axes: see the_axes_cell"
    alone = judge([Case("f", tag="hides")], [Result()], LIVE)
    assert alone.category == "not judged"
    assert alone.message == "not judged: fix the_axes_cell first: one value each"
