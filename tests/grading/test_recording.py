"""The student download's recording replays the live checks, and computes nothing itself.

`normlab.course.download.recording.record` records, from the full normlab, every check's
visible battery and the answers to the questions it declares about it;
`normlab.grading.recorded` replays that in a download, as the checks' backing
(`normlab.grading.backing`). Here, in this process: the replayed checks give the live verdicts
and messages over the verdict bank's visible batteries (one known exception, below), a question
that was not recorded raises instead of computing, the hidden battery is refused, and what
ships is the checks' folder, the answer key left out. The wheel itself, installed in a fresh
venv, is tested in tests/book/test_student_wheel.py.
"""

from __future__ import annotations

import ast
import json
from functools import partial

import numpy as np
import pytest
from course_helpers import run_sources, variant_for
from test_verdicts import SNAPSHOT, submission_sources, submissions

import normlab
from normlab.answer_key import batteries
from normlab.answer_key.live import LIVE
from normlab.course.download import recording as student_recording
from normlab.course.download import source as student_download
from normlab.grading import CHECKS, DEFAULT_SEED, backing, pools, run_case
from normlab.grading import recorded as recording
from normlab.grading.oracle import ASK
from normlab.grading.selfcheck import run_check
from normlab.grading.session import CheckerError
from normlab.grading.verdict import CRASHED
from normlab_sandbox import wire
from normlab_sandbox.cases import WIRE_TYPES, Ref, Result

# its witness runs normlab's audit on the norm_fn it is handed: the audit probes inputs of its
# own, which the download did not record, so there the witness cells cannot run
WITNESS_FROM_AUDIT = "ps3_axes/bank:bn-eps-outside-and-witness-from-audit"
# the bank's submissions whose functions keep state between calls (statistics kept by shape)
KEEPS_STATE = {"ps2_layer_norm/extra:running-statistics"}


@pytest.fixture(scope="module")
def recorded() -> recording.Recording:
    """The recording, through its bytes (what a download holds)."""
    return recording.Recording.loads(student_recording.record().dumps())


@pytest.fixture
def replaying(recorded, monkeypatch) -> recording.RecordedBacking:
    """The checks backed by the recording, as in a download."""
    replay = recording.RecordedBacking(recorded)
    monkeypatch.setattr(backing, "current", lambda: replay)
    return replay


def _verdicts(checks, namespace, variant=None) -> dict:
    found = {}
    for grade_id, spec in checks.items():
        try:
            run_one = partial(run_case, namespace)
            verdict = run_check(spec, run_one, variant=variant)
            found[grade_id] = (verdict.category, verdict.message)
        except CheckerError as exc:
            found[grade_id] = ("checker error", str(exc))
    return found


def test_a_full_install_is_backed_by_the_answer_key():
    """The grader's own normlab runs the live checks: no recording, and a battery for every
    check, whose hidden cases start with its visible ones."""
    assert backing.current() is LIVE and not recording.DATA.exists()
    for assignment, specs in CHECKS.items():
        own = {"variant": variant_for(assignment)} if assignment in pools.POOLS else {}
        for spec in specs.values():
            assert batteries.battery(spec)
            visible = spec.make_cases(DEFAULT_SEED, hidden=False, **own)
            hidden = spec.make_cases(DEFAULT_SEED, hidden=True, **own)
            assert wire.dumps(hidden[: len(visible)], WIRE_TYPES) == wire.dumps(visible, WIRE_TYPES)


def test_the_replay_gives_the_live_verdicts_over_the_bank(recorded, monkeypatch):
    """Every visible battery of the bank replayed gives the live verdict's category and message
    as the verdict snapshot holds them (test_verdicts.py holds the live checks to it), but for
    the witness that calls normlab's audit, where each witness cell says it cannot run in the
    download. A submission that keeps state between calls (`KEEPS_STATE`) is judged live here,
    in the replay's order: the snapshot runs a cell's hidden battery before the next cell's
    visible one, which such a submission sees."""
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    sources = submission_sources()
    replay = recording.RecordedBacking(recorded)
    differ = {}
    with np.errstate(all="ignore"):
        for name, (assignment, namespace) in sorted(submissions().items()):
            variant = variant_for(assignment)
            if name in KEEPS_STATE:
                live_namespace = run_sources(sources[name][1])
                live = _verdicts(CHECKS[assignment], live_namespace, variant)
            else:
                live = {g: (v["visible"]["category"], v["visible"]["message"])
                        for g, v in snapshot[name].items()}  # fmt: skip
            with monkeypatch.context() as patched:
                patched.setattr(backing, "current", lambda: replay)
                replayed = _verdicts(CHECKS[assignment], namespace, variant)
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


def test_every_variant_of_a_pool_is_recorded_and_replays_as_live(recorded, monkeypatch):
    """ps1's visible battery for every slot of its pool, answered as live: a student's own
    numbers are checked offline whoever the student is; no other variant is."""
    replay = recording.RecordedBacking(recorded)
    ps1 = CHECKS["ps1_by_hand"].cell
    for variant in pools.variants("ps1_by_hand"):
        r = np.asarray(variant["record"], dtype=np.float64)
        namespace = {"mean_r": r.mean(), "var_r": r.var(ddof=1)}  # right, then wrong
        for spec in (ps1.mean, ps1.variance):
            run_one = partial(run_case, namespace)
            live = run_check(spec, run_one, variant=variant)
            with monkeypatch.context() as patched:
                patched.setattr(backing, "current", lambda: replay)
                replayed = run_check(spec, run_one, variant=variant)
            assert (replayed.category, replayed.message) == (live.category, live.message)
        assert replayed.category == ps1.variance.category
    made_up = {"slot": 10**6, "record": [1, 2, 3, 4], "d_model": 512}
    monkeypatch.setattr(backing, "current", lambda: replay)
    with pytest.raises(CheckerError, match="own variant"):
        run_check(ps1.mean, partial(run_case, {}), variant=made_up)


def test_a_question_not_recorded_raises_and_never_computes(replaying):
    oracle, x = replaying, np.random.default_rng(1).normal(size=(3, 5))
    for question in (
        ASK.formula_outputs(x, 1e-5),
        ASK.statistics(x),
        ASK.reference("layer_norm", x),
        ASK.wrong("strided_groups", x[None], 1),
    ):
        with pytest.raises(recording.NotRecorded, match="not recorded"):
            oracle.answer(question)


def test_a_recorded_answer_is_what_the_answer_key_says(recorded):
    """Each visible case's declared questions, answered from the recording as live."""
    spec = CHECKS["ps2_layer_norm"].cell.stats_axis
    case = spec.make_cases(DEFAULT_SEED, hidden=False)[1]
    (question,) = spec.questions(case)
    replayed = recording.RecordedBacking(recorded).answer(question)
    for stats, (mean, var) in LIVE.answer(question).items():
        np.testing.assert_array_equal(replayed[stats][0], mean)
        np.testing.assert_array_equal(replayed[stats][1], var)


def test_the_hidden_battery_and_other_seeds_are_refused(replaying, monkeypatch):
    spec = CHECKS["ps2_layer_norm"].cell.axis
    visible = LIVE.cases(spec, DEFAULT_SEED, False, None)
    assert len(spec.make_cases(DEFAULT_SEED, hidden=False)) == len(visible)
    with pytest.raises(recording.NotRecorded, match="hidden battery is not in the student"):
        spec.make_cases(DEFAULT_SEED, hidden=True)
    with pytest.raises(recording.NotRecorded, match="seed"):
        spec.make_cases(DEFAULT_SEED + 1, hidden=False)
    with pytest.raises(CheckerError, match="hidden battery"):
        run_check(spec, partial(run_case, {}), hidden=True)


def test_a_run_that_asked_a_norm_about_an_unrecorded_input_is_not_judged(replaying):
    spec = CHECKS["ps3_axes"].cell.witness_accepts_layer_norm
    missed = Result(output=False, output_type="bool", probes=((recording.NOT_RECORDED, "x"),))
    verdict = run_check(spec, lambda case: missed)
    assert verdict.category == CRASHED and "cannot run in the student download" in verdict.message


def test_every_visible_case_is_recorded_as_made(recorded):
    for assignment, specs in CHECKS.items():
        for grade_id, spec in specs.items():
            kept = recorded.cases[assignment][grade_id]  # the recording's own keys
            if not spec.varies:
                made = spec.make_cases(DEFAULT_SEED, hidden=False)
                assert wire.dumps(kept, WIRE_TYPES) == wire.dumps(made, WIRE_TYPES)
                continue
            variants = pools.variants(assignment)
            assert sorted(kept) == sorted(v["slot"] for v in variants)
            for variant in variants:
                made = spec.make_cases(DEFAULT_SEED, hidden=False, variant=variant)
                assert wire.dumps(kept[variant["slot"]], WIRE_TYPES) == wire.dumps(made, WIRE_TYPES)


# --- what ships ----------------------------------------------------------------------------


def test_what_ships_is_the_checks_folder_and_never_the_answer_key(tmp_path):
    """The wheel's source is an include list: the checks, whole, the sandbox's modules, stubs
    of the reference's modules and the recording; nothing of the answer key."""
    lib = student_download.write_source(tmp_path / "src") / "lib"
    shipped = {p.relative_to(lib).as_posix() for p in lib.rglob("*.py")}
    grading = student_download.LIB / "normlab" / "grading"
    checks = {p.relative_to(student_download.LIB).as_posix() for p in grading.rglob("*.py")}
    sandbox = {f"normlab_sandbox/{name}.py" for name in student_download.SANDBOX}
    stubs = {f"normlab/{m}.py" for m in student_recording.reference_modules()}
    assert shipped == checks | sandbox | stubs | {"normlab/__init__.py"}
    for path in checks:  # copied as they are: no surgery
        assert (lib / path).read_bytes() == (student_download.LIB / path).read_bytes()
    assert not [p for p in shipped if "answer_key" in p]
    assert (lib / "normlab" / "grading" / "recorded.json").is_file()


def test_the_stubs_keep_the_reference_names_and_parameters_and_compute_nothing():
    """A stub has its function's name and parameters, and raises NotInDownload."""
    source = student_download._stub(normlab.layer_norm, "layer_norm")
    (stub,) = ast.parse(source).body
    assert stub.name == "layer_norm"
    assert ast.unparse(stub.args) == "x, gamma=None, beta=None, eps=1e-05"
    namespace = {"recorded": recording}
    exec(source, namespace)  # noqa: S102 (the stub above)
    with pytest.raises(recording.NotInDownload, match="not part of the student download"):
        namespace["layer_norm"](np.ones((2, 4)))
    count = student_download._stub(normlab.param_count, "params")
    assert "def param_count(kind, d_model, *, bias=True, affine=True):" in count
