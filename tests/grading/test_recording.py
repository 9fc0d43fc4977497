"""The student download's recording replays the live checks, and computes nothing itself.

`normlab.course.download.recording.record` records, from the full normlab, every check's visible
battery and what its judge asks about it; `normlab.grading.recording` replays that in a
download. Here, in this process: the replayed checks give the live verdicts and messages over
the verdict bank's visible batteries (one known exception, below), a question or a call that
was not recorded raises instead of computing, the hidden battery is refused, and the source
transform that strips case makers leaves no generator behind. The wheel itself, installed in a
fresh venv, is tested in tests/packaging/test_student_wheel.py.
"""

from __future__ import annotations

import ast
import inspect
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from test_oracle import BACKING_MODULES, _reaches
from test_verdicts import submissions

import normlab
from normlab.course.download import recording as student_recording
from normlab.course.download import source as student_download
from normlab.grading import CHECKS, DEFAULT_SEED, recording, run_case, trusted
from normlab.grading.oracle import LIVE
from normlab.grading.selfcheck import CheckerError, run_check
from normlab.grading.verdict import CRASHED
from normlab_sandbox import guarded
from normlab_sandbox.cases import Ref, Result

GRADING = Path(recording.__file__).parent
# its witness runs normlab's audit on the norm_fn it is handed: the audit probes inputs of its
# own, which the download did not record, so there the witness cells cannot run
WITNESS_FROM_AUDIT = "ps3_axes/bank:bn-eps-outside-and-witness-from-audit"


@pytest.fixture(scope="module")
def recorded() -> recording.Recording:
    """The recording, through its bytes (what a download holds)."""
    return recording.Recording.loads(student_recording.record().dumps())


def _verdicts(checks, namespace, resolve, oracle) -> dict:
    found = {}
    for grade_id, spec in checks.items():
        try:
            run_one = partial(guarded.run_case, namespace, resolve=resolve)
            verdict = run_check(spec, run_one, oracle=oracle)
            found[grade_id] = (verdict.category, verdict.message)
        except CheckerError as exc:
            found[grade_id] = ("checker error", str(exc))
    return found


def test_a_full_install_holds_no_recording():
    """The grader's own normlab runs the live checks: no recording, no replay."""
    assert recording.RECORDING is None and not recording.DATA.exists()
    assert recording.ORACLE is LIVE and recording.resolve is trusted.resolve
    for specs in CHECKS.values():
        for spec in specs.values():
            assert len(spec.make_cases(DEFAULT_SEED, hidden=True)) >= len(
                spec.make_cases(DEFAULT_SEED, hidden=False)
            )


def test_the_replay_gives_the_live_verdicts_over_the_bank(recorded):
    """Every visible battery of the bank, live and replayed, in the same order (a submission
    may keep state between calls): the same category and message, but for the witness that
    calls normlab's audit, where each witness cell says it cannot run in the download."""
    checks, oracle = recorded.checks(CHECKS), recorded.oracle()
    differ = {}
    with np.errstate(all="ignore"):
        live_bank, replay_bank = submissions(), submissions()  # each its own state
        for name, (assignment, namespace) in sorted(live_bank.items()):
            live = _verdicts(CHECKS[assignment], namespace, trusted.resolve, LIVE)
            fresh = replay_bank[name][1]
            replayed = _verdicts(checks[assignment], fresh, recorded.resolve, oracle)
            differ |= {(name, g): replayed[g] for g in live if live[g] != replayed[g]}
    assert {name for name, _ in differ} == {WITNESS_FROM_AUDIT}
    for (_, grade_id), (category, message) in differ.items():
        assert grade_id.startswith("witness_")
        assert category == CRASHED and "cannot run in the student download" in message


def test_the_replay_answers_the_course_witness_on_every_visible_norm(recorded):
    """ps3's norm_fn answers every input the course's witness gives any of them, for each
    of them: the correct LayerNorm and the visible red team."""
    assert set(recorded.refs) == {
        arg.name
        for spec in CHECKS["ps3_axes"].values()
        for case in spec.make_cases(DEFAULT_SEED, hidden=False)
        for arg in case.args
        if isinstance(arg, Ref)
    }
    x = np.random.default_rng(0).normal(size=(3, 4, 8))  # not the witness's own
    for ref in recorded.refs:
        norm_fn = recorded.resolve(Ref(ref), {})
        with pytest.raises(recording.NotRecorded, match="not recorded in this student download"):
            norm_fn(x)
        assert norm_fn.probes() == ((recording.NOT_RECORDED, "a float64 array of shape (3, 4, 8)"),)


def test_a_question_not_recorded_raises_and_never_computes(recorded):
    oracle, x = recorded.oracle(), np.random.default_rng(1).normal(size=(3, 5))
    for ask in (
        lambda: oracle.family(x, 1e-5),
        lambda: oracle.statistics(x),
        lambda: oracle.reference("layer_norm", x),
        lambda: oracle.wrong("strided_groups", x[None], 1),
        lambda: recorded.call("layer_norm", (x,), {}),
        lambda: recorded.call("row_stats", (x,), {}),
    ):
        with pytest.raises(recording.NotRecorded, match="not recorded"):
            ask()
    with pytest.raises(recording.NotRecorded, match="not in this student download"):
        recorded.call("training.run", (x,), {})


def test_a_recorded_call_is_matched_however_its_arguments_are_passed(recorded):
    """normlab.layer_norm(x, gamma, beta, eps) on a visible case's arguments gets the
    reference's numbers, by position or by keyword, defaults spelled out or not."""
    case = CHECKS["ps2_layer_norm"]["axis"].make_cases(DEFAULT_SEED, hidden=False)[0]
    x, gamma, beta = case.args
    want = normlab.layer_norm(x, gamma, beta)
    for args, kwargs in [((x, gamma, beta), {}), ((x,), {"beta": beta, "gamma": gamma})]:
        got = recorded.call("layer_norm", args, {**kwargs, "eps": 1e-5})
        np.testing.assert_array_equal(got, want)
        got[...] = 0  # the student's code may write into it: the recording stays as it was
    np.testing.assert_array_equal(recorded.call("layer_norm", (x, gamma, beta), {}), want)


def test_the_hidden_battery_and_other_seeds_are_refused(recorded):
    spec = recorded.checks(CHECKS)["ps2_layer_norm"]["axis"]
    visible = CHECKS["ps2_layer_norm"]["axis"].make_cases(DEFAULT_SEED, hidden=False)
    assert len(spec.make_cases(DEFAULT_SEED, hidden=False)) == len(visible)
    with pytest.raises(recording.NotRecorded, match="hidden battery is not in the student"):
        spec.make_cases(DEFAULT_SEED, hidden=True)
    with pytest.raises(recording.NotRecorded, match="seed"):
        spec.make_cases(DEFAULT_SEED + 1, hidden=False)
    with pytest.raises(CheckerError, match="hidden battery"):
        run_check(spec, partial(run_case, {}), hidden=True)


def test_a_run_that_asked_a_norm_about_an_unrecorded_input_is_not_judged(recorded):
    spec = recorded.checks(CHECKS)["ps3_axes"]["witness_accepts_layer_norm"]
    cases = spec.make_cases(DEFAULT_SEED, hidden=False)
    missed = Result(output=False, output_type="bool", probes=((recording.NOT_RECORDED, "x"),))
    verdict = spec.judge(cases, [missed], recorded.oracle())
    assert verdict.category == CRASHED and "cannot run in the student download" in verdict.message


def test_every_visible_case_is_recorded_as_made(recorded):
    for assignment, specs in CHECKS.items():
        for grade_id, spec in specs.items():
            made = spec.make_cases(DEFAULT_SEED, hidden=False)
            kept = recorded.cases[assignment][grade_id]
            assert recording.fingerprint(tuple(kept)) == recording.fingerprint(tuple(made))


# --- the source transform -------------------------------------------------------------------

SOURCE = '''
def spec(kind):
    """A check."""
    def make(rng, hidden):
        # the hidden shapes
        shapes = [(3, 5)]
        if hidden:
            shapes += [(2, 3, 2, 5)]
        return shapes

    def judge(cases, results, oracle):
        return None

    return make, judge


def helper(rng, x):
    return rng.normal(size=x)


def check(grade_id, hidden=False):
    return hidden


def hidden_only(extras):
    return extras


SHAPES = ([(3, 5)], hidden_only([(4, 7, 7),
    (2, 2, 9)]))  # "✓": offsets count bytes
'''


def test_stripping_empties_hidden_only_and_every_function_that_takes_rng():
    stripped = student_download.strip_case_makers(SOURCE, "example.py")
    for gone in ("(2, 3, 2, 5)", "hidden shapes", "(4, 7, 7)", "(2, 2, 9)"):
        assert gone not in stripped
    namespace: dict = {}
    exec(stripped, namespace)  # noqa: S102 (the example above)
    assert namespace["SHAPES"] == ([(3, 5)], [])
    make, judge = namespace["spec"]("kind")
    with pytest.raises(RuntimeError, match="not in the student download"):
        make(None, True)
    with pytest.raises(RuntimeError, match="not in the student download"):
        namespace["helper"](None, 3)
    assert judge([], [], None) is None and namespace["check"]("g", hidden=True) is True


@pytest.mark.parametrize(
    "source, problem",
    [
        ("f = lambda rng, hidden: [rng]\n", "lambda"),
        ("def make(rng, hidden): return [rng]\n", "one-line"),
    ],
)
def test_a_case_maker_the_transform_cannot_strip_is_a_build_error(source, problem):
    with pytest.raises(student_download.BuildError, match=problem):
        student_download.strip_case_makers(source, "example.py")


def test_every_battery_is_made_by_a_function_that_takes_rng():
    """What the download strips is what makes cases: each check's `make` takes rng first."""
    for specs in CHECKS.values():
        for spec in specs.values():
            code = spec.make_cases.__code__
            closure = dict(zip(code.co_freevars, spec.make_cases.__closure__, strict=True))
            make = closure["make"].cell_contents
            assert next(iter(inspect.signature(make).parameters)) == "rng", make


def test_what_stays_with_the_graders_covers_every_module_that_computes_expectations():
    """The oracle's backing and every module that imports it stay with the graders, but the
    oracle itself: it imports its backing only when asked (the download carries the seam, and
    a module that makes cases with LIVE imports there, never calling it)."""
    computing = {
        path.stem
        for path in GRADING.glob("*.py")
        if _reaches(ast.parse(path.read_text(encoding="utf-8"))) or path.stem in BACKING_MODULES
    }
    assert computing - {"oracle"} <= set(student_download.GRADERS_ONLY)
    assert {"reference", "trusted", *BACKING_MODULES} <= set(student_download.GRADERS_ONLY)
    oracle = ast.parse((GRADING / "oracle.py").read_text(encoding="utf-8"))
    imports = [node for node in oracle.body if isinstance(node, ast.Import | ast.ImportFrom)]
    assert not _reaches(ast.Module(body=imports, type_ignores=[]))


def test_the_stubs_keep_the_reference_names_and_parameters():
    """A stub has its function's name and parameters, and only calls the recording."""
    source = student_download._stub(normlab.layer_norm, "layer_norm")
    (stub,) = ast.parse(source).body
    assert stub.name == "layer_norm"
    assert ast.unparse(stub.args) == "x, gamma=None, beta=None, eps=1e-05"
    assert ast.unparse(stub.body[-1]) == "return recording.call('layer_norm', x, gamma, beta, eps)"
    count = student_download._stub(normlab.param_count, "params")
    assert "recording.call('param_count', kind, d_model, bias=bias, affine=affine)" in count
    assert "def param_count(kind, d_model, *, bias=True, affine=True):" in count  # no annotations
