"""One function's failure costs exactly the cells that need it.

A ps2 submission whose row_stats (or layer_norm) loops, with or without NumPy calls, kills its
kernel mid-call (os._exit, a signal), breaks the kernel's channel, or burns NumPy until the CPU
limit, scores on every cell exactly what its twin scores whose function raises at once; for
a loop, that is also what plain `nbgrader autograde` gives (checked here on row_stats' loop:
layer_norm's would cost plain nbgrader a timeout and a new kernel for each of its cells, and
proves nothing more). The other
function keeps its points: 19 of 25 when row_stats fails, 6 when layer_norm does. Real grading
through `python -m normlab.course grade`, as test_attacks.py does.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from demo_course import LAYER_NORM, PS2, ROW_STATS, build_course, fill, released_notebook
from demo_course import write_submission as write
from security_attacks import STATS_CELLS
from security_course import CONFIG_EXTRA, TIMEOUT_S, Graded, run_grader, run_nbgrader_autograde

from normlab.course.grader import run_record
from normlab.grading.verdict import CRASHED, TIMED_OUT

pytestmark = [pytest.mark.slow, pytest.mark.kernels]

RAISES = "    raise NotImplementedError()\n"
STATS_LOOP = (
    "    x = np.asarray(x, dtype=np.float64)\n"
    "    while True:\n"
    "        mean, var = np.mean(x, axis=-1), x.var(axis=-1)\n"
)
LN_LOOP = "    while True:\n        np.std(x, axis=-1), np.var(x, axis=-1)\n"
EXIT = "    x.var(axis=-1)\n    import os\n    os._exit(3)\n"
KILL = "    np.var(x)\n    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n"
# questions only the grader answers, in a loop (refused outside a case, answered inside one)
ASKS = (
    "    while True:\n"
    "        try:\n"
    "            normlab.row_stats(x)\n"
    "        except Exception:\n"
    "            pass\n"
)
# the same with the kernel's own SIGINT handler replaced: an interrupt may cut its messages
CUT = "    import signal\n    signal.signal(signal.SIGINT, signal.default_int_handler)\n" + ASKS
BURN = "    big = np.ones((256, 4096))\n    while True:\n        big.var(axis=-1)\n"


def stats(body: str) -> str:
    return "import normlab\n\n\ndef row_stats(x):\n" + body


def ln(body: str) -> str:
    return "def layer_norm(x, gamma, beta, eps=1e-5):\n" + body


# name: (row_stats, layer_norm, the twin whose function raises at once, keep the "try it" cells)
SUBMISSIONS = {
    "stats_raises": (stats(RAISES), LAYER_NORM, None, True),
    "ln_raises": (ROW_STATS, ln(RAISES), None, True),
    "stats_loops_on_numpy": (stats(STATS_LOOP), LAYER_NORM, "stats_raises", True),
    "stats_loops_on_numpy_in_checks": (stats(STATS_LOOP), LAYER_NORM, "stats_raises", False),
    "ln_loops_on_numpy": (ROW_STATS, ln(LN_LOOP), "ln_raises", True),
    "stats_loops_on_questions": (stats(ASKS), LAYER_NORM, "stats_raises", False),
    "stats_exits_midcall": (stats(EXIT), LAYER_NORM, "stats_raises", True),
    "ln_killed_by_a_signal_midcall": (ROW_STATS, ln(KILL), "ln_raises", True),
    "stats_cuts_its_channel": (stats(CUT), LAYER_NORM, "stats_raises", True),
}
PLAIN_LOOP = "stats_loops_on_numpy"
CPU_LIMIT_S = 3
CPU_SUBMISSIONS = {
    "correct": (ROW_STATS, LAYER_NORM, None, True),
    "stats_raises": SUBMISSIONS["stats_raises"],
    "ln_raises": SUBMISSIONS["ln_raises"],
    "stats_burns_cpu": (stats(BURN), LAYER_NORM, "stats_raises", True),
    "ln_burns_cpu": (ROW_STATS, ln(BURN), "ln_raises", True),
}
MARGIN_S = 20.0  # start-up, a replacement or two, the checks


def submit(course, submissions: dict) -> None:
    for student, (row_stats, layer_norm, _, keep_try_cells) in submissions.items():
        answers = {"row_stats_answer": row_stats, "layer_norm_answer": layer_norm}
        nb = fill(released_notebook(course), answers)
        if not keep_try_cells:  # the function is first called inside a check
            nb.cells = [c for c in nb.cells if c.cell_type != "code" or "nbgrader" in c.metadata]
        write(course, student, nb)


@pytest.fixture(scope="module")
def failing_course(tmp_path_factory) -> Graded:
    course = build_course(tmp_path_factory.mktemp("failing") / "course", config_extra=CONFIG_EXTRA)
    submit(course, SUBMISSIONS)
    seconds, output = run_grader(course)
    return Graded(course, seconds, output)


@pytest.fixture(scope="module")
def cpu_course(tmp_path_factory) -> Graded:
    """Graded with a kernel CPU limit of 3 s and a cell timeout long enough that the CPU
    limit, not the timeout, stops a function that burns NumPy."""
    extra = "c.Execute.timeout = 60\n"
    course = build_course(tmp_path_factory.mktemp("cpu") / "course", config_extra=extra)
    submit(course, CPU_SUBMISSIONS)
    seconds, output = run_grader(course, "--cpu-seconds", str(CPU_LIMIT_S))
    return Graded(course, seconds, output)


@pytest.fixture(scope="module")
def plain_nbgrader_course(tmp_path_factory) -> Graded:
    course = build_course(tmp_path_factory.mktemp("plain") / "course", config_extra=CONFIG_EXTRA)
    submit(course, {PLAIN_LOOP: SUBMISSIONS[PLAIN_LOOP]})
    seconds, output = run_nbgrader_autograde(course)
    return Graded(course, seconds, output)


def _twins(submissions: dict):
    return [(name, twin) for name, (_, _, twin, _) in submissions.items() if twin]


@pytest.mark.parametrize(("student", "twin"), _twins(SUBMISSIONS))
def test_a_failing_function_costs_what_raising_at_once_costs(failing_course, student, twin):
    scores = failing_course.scores()
    assert scores[student] == scores[twin]
    assert failing_course.total(student) == (19.0 if twin == "stats_raises" else 6.0)


@pytest.mark.parametrize(("student", "twin"), _twins(CPU_SUBMISSIONS))
def test_burning_numpy_until_the_cpu_limit_costs_what_raising_costs(cpu_course, student, twin):
    scores = cpu_course.scores()
    assert scores[student] == scores[twin]
    assert cpu_course.total("correct") == 25.0  # the low limit costs an honest notebook nothing
    messages = [c["message"] or "" for c in cpu_course.record(student)["cells"]]
    assert any(f"CPU time limit ({CPU_LIMIT_S} s)" in m for m in messages), messages


def test_plain_nbgrader_gives_a_loop_the_same_scores(failing_course, plain_nbgrader_course):
    plain = plain_nbgrader_course.scores()[PLAIN_LOOP]
    assert plain == failing_course.scores()[PLAIN_LOOP]


@pytest.mark.parametrize("student", [s for s in SUBMISSIONS if "loops" in s])
def test_a_looping_submission_is_graded_within_one_timeout(failing_course, student):
    runs = json.loads(run_record(failing_course.root, PS2).read_text())["students"]
    seconds = next(s["seconds"] for s in runs if s["student"] == student)
    assert seconds <= TIMEOUT_S + MARGIN_S


def test_a_crash_is_recorded_with_its_reason_and_a_fresh_kernel(failing_course):
    record = failing_course.record("stats_exits_midcall")
    assert record["kernel"] == "replaced" and "exited with code 3" in record["reason"]
    not_run = [c for c in record["cells"] if c["status"] == "not run"]
    died = {c["grade_id"] for c in record["cells"] if c["status"] == "kernel died"}
    assert {c["grade_id"] for c in not_run} == set(STATS_CELLS) - died
    assert all("row_stats stopped the kernel" in c["message"] for c in not_run), not_run
    lost = [c for c in record["cells"] if c["grade_id"] and c["status"] != "passed"]
    assert {c["category"] for c in lost} == {CRASHED}


@pytest.mark.parametrize("student", ["stats_loops_on_numpy", "stats_loops_on_numpy_in_checks"])
def test_a_loop_s_cells_are_counted_as_timed_out(failing_course, student):
    record = failing_course.record(student)
    lost = [c for c in record["cells"] if c["grade_id"] and c["status"] != "passed"]
    assert {c["grade_id"] for c in lost} == set(STATS_CELLS)
    assert {c["category"] for c in lost} == {TIMED_OUT}


def test_a_cut_channel_never_reaches_a_verdict(failing_course):
    """Whatever the interrupt cut, no cell of the function that cut it passes, and the other
    function's cells all pass."""
    record = failing_course.record("stats_cuts_its_channel")
    by_status = {c["grade_id"]: c["status"] for c in record["cells"] if c["grade_id"]}
    assert all(by_status[g] != "passed" for g in by_status if g.startswith("stats_"))
    assert all(by_status[g] == "passed" for g in by_status if not g.startswith("stats_"))
    assert not any("out of turn" in (c["message"] or "") for c in record["cells"])


def test_feedback_names_the_failing_function_in_every_cell_it_costs(failing_course):
    nb = nbformat.read(
        failing_course.root / "autograded" / "ln_killed_by_a_signal_midcall" / PS2 / f"{PS2}.ipynb",
        4,
    )
    text = "\n".join(
        o.get("evalue", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )
    assert "SIGKILL" in text and "layer_norm stopped the kernel" in text
