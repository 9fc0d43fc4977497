"""The sandbox kernel on its own: what it can see and do, and how it stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from ast import literal_eval

import numpy as np
import pytest
from cells import PS2
from demo_course import REPO, UID_BASE

from normlab.course.grader import bwrap
from normlab.course.grader import isolation as iso
from normlab.course.grader.answers import Answers
from normlab.course.grader.kernel_process import GRACE_S, Interrupted, KernelDied, start_kernel
from normlab_sandbox import protocol
from normlab_sandbox.cases import Case, Ref

pytestmark = [pytest.mark.slow, pytest.mark.kernels]
EXPOSE = tuple(iso.python_paths())
NO_STRICT = bwrap.unavailable(EXPOSE, iso.Limits().tmp_bytes)
MODE = "basic" if NO_STRICT else "strict"
needs_strict = pytest.mark.skipif(bool(NO_STRICT), reason=f"no strict isolation: {NO_STRICT}")


@pytest.fixture
def kernel(tmp_path):
    (tmp_path / "data.txt").write_text("the student's own file")
    (tmp_path / "ps2_layer_norm.ipynb").write_text("{}")  # autograded: holds hidden tests
    isolation = iso.Isolation(MODE, hide=(str(REPO),), expose=EXPOSE, uid_base=UID_BASE)
    made = start_kernel(isolation, 0, str(tmp_path))
    yield made
    made.close()


def run(kernel, source: str, timeout: float = 20.0, answers=None) -> str:
    reply = kernel.request(protocol.RunCell(0, source), timeout, answers or Answers())
    return "".join(
        o.get("text", "") + o.get("ename", "") + o.get("evalue", "") for o in reply.outputs
    )


def test_the_kernel_has_the_students_files_and_numpy(kernel):
    assert run(kernel, "print(open('data.txt').read())") == "the student's own file\n"
    assert run(kernel, "import os; print(sorted(os.listdir('.')))") == "['data.txt']\n"
    assert run(kernel, "import numpy as np; print(np.ones(3).sum())") == "3.0\n"


def test_notebook_features_work_as_in_a_jupyter_kernel(kernel):
    answers = Answers()
    plot = "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2]);"
    reply = kernel.request(protocol.RunCell(0, plot), 60, answers)
    assert [o["output_type"] for o in reply.outputs] == ["display_data"]
    assert "image/png" in reply.outputs[0]["data"]
    assert run(kernel, "!echo from a shell") == "from a shell\n"
    reply = kernel.request(protocol.RunCell(0, "6 * 7"), 20, answers)
    assert reply.outputs[0]["data"]["text/plain"] == "42"


@needs_strict
def test_a_strict_kernel_sees_no_course_no_home_and_cannot_write(kernel):
    """Of the repository only the Python environment and normlab_sandbox exist (when they
    live in it), nothing of the grader's home, /etc/passwd or the network."""
    listing = "import os\ndef ls(p):\n    return sorted(os.listdir(p)) if os.path.isdir(p) else []"
    run(kernel, listing)
    assert set(literal_eval(run(kernel, f"print(ls({str(REPO)!r}))"))) <= {".venv", "lib"}
    assert run(kernel, f"print(ls({str(REPO / 'lib')!r}))") == "['normlab_sandbox']\n"
    home = os.path.expanduser("~")
    exposed = {p[len(home) + 1 :].split("/")[0] for p in EXPOSE if p.startswith(home + "/")}
    assert set(literal_eval(run(kernel, f"print(ls({home!r}))"))) <= exposed
    assert "Read-only" in run(kernel, "open('/usr/x', 'w')")
    assert "No such file" in run(kernel, "open('/etc/passwd')")
    uid = run(kernel, "print(os.getuid())").strip()
    assert uid == str(UID_BASE if os.geteuid() == 0 else os.geteuid())
    processes = run(kernel, "print(sum(p.isdigit() for p in os.listdir('/proc')))")
    assert int(processes) <= 2  # the kernel and bwrap's reaper: nothing of the grader


@needs_strict
def test_a_strict_kernel_sees_an_environment_that_lives_under_tmp(tmp_path):
    """A checkout under /tmp (CI's fresh clone) must still expose its .venv to the kernel,
    though the kernel's /tmp is a private tmpfs."""
    environment = tmp_path / "checkout" / ".venv"
    environment.mkdir(parents=True)
    (environment / "marker.txt").write_text("visible")
    isolation = iso.Isolation("strict", expose=(*EXPOSE, str(environment)), uid_base=UID_BASE)
    made = start_kernel(isolation, 0, None)
    try:
        assert run(made, f"print(open({str(environment / 'marker.txt')!r}).read())") == "visible\n"
    finally:
        made.close()


def test_normlab_is_a_stand_in_and_numpy_var_is_noted_to_the_grader(kernel):
    answers = Answers()
    run(
        kernel,
        "import normlab, sys\nimport numpy as np\ndef f(x):\n    return np.asarray(x).var(-1)\n",
        answers=answers,
    )
    assert "not available to notebook cells" in run(kernel, "normlab.layer_norm(np.ones(3))")
    # hide the profile hook the in-kernel tripwire uses: the grader still sees the call
    run(kernel, "sys.setprofile = lambda f: None\nsys.getprofile = lambda: None")
    case = Case("f", "call", (np.arange(6.0).reshape(2, 3),))
    answers.begin_case(case)
    reply = kernel.request(protocol.RunCase(0, case, {"f": "f"}), 20, answers)
    noted, _, _ = answers.end_case()
    assert np.array_equal(reply.result.output, [2 / 3, 2 / 3]) and noted == ("numpy.var",)


def test_a_loop_of_numpy_variances_costs_the_grader_one_note_per_case(kernel):
    """10,000 calls of x.var, np.std and np.nanvar in a case: computed in the kernel, and the
    grader hears of each function once (np.std's own call of np.var is not its caller's)."""
    heard = []

    def answers(question):
        heard.append(question)
        return None, None

    loop = "def f(x):\n    for _ in range(10_000):\n        x.var(-1), np.std(x), np.nanvar(x)\n"
    run(kernel, f"import numpy as np\n{loop}    return x.var(-1)\n")
    for _ in range(2):  # a second case is noted again
        case = Case("f", "call", (np.arange(6.0).reshape(2, 3),))
        reply = kernel.request(protocol.RunCase(0, case, {"f": "f"}), 60, answers)
        assert np.array_equal(reply.result.output, [2 / 3, 2 / 3])
        assert reply.result.reference_calls == ("numpy.var", "numpy.std", "numpy.nanvar")
    assert [q.name for q in heard] == ["numpy.var", "numpy.std", "numpy.nanvar"] * 2
    assert {type(q) for q in heard} == {protocol.Note}


def test_a_cell_calling_normlab_grading_is_quiet_and_grading_goes_on(kernel):
    """A notebook's own cell that calls the checks (or a summary of them) does not break, and
    leaves no note of the grader's in the student's feedback; try_it runs its call."""
    text = run(
        kernel,
        "import normlab.grading\nfrom normlab.grading import check, try_it\n"
        "check('axis', print)\nnormlab.grading.summary(globals())\n"
        "print([gid for gid in normlab.grading.CHECKS['ps2_layer_norm']])\n"
        "try_it(lambda x: x + 1, 41)\ntry_it(lambda x: x / 0, 1)\ntry_it(print, 'hi')",
    )
    shown = "[]\n42\n✗ <lambda> raised ZeroDivisionError: division by zero\nhi\n"
    assert text == shown + "print returned None: is its body written, ending with return?\n"
    assert run(kernel, "print('alive')") == "alive\n"


def test_check_in_a_test_cell_the_grader_did_not_read_fails_closed(kernel):
    """A test cell the grader sends to the kernel (it could not read it as check calls) that
    calls check raises there, naming the cell: it scores 0 instead of passing unjudged."""
    source = "from normlab.grading import check\ncheck('axis', abs, hidden=not False)"
    reply = kernel.request(protocol.RunCell(0, source, PS2.axis.grade_id), 20, Answers())
    (error,) = [o for o in reply.outputs if o["output_type"] == "error"]
    assert reply.error and error["ename"] == "UnreadTestCell"
    assert "test cell 'axis'" in error["evalue"] and "scores 0" in error["evalue"]
    assert run(kernel, "from normlab.grading import check\ncheck('axis', print)") == ""


def test_a_loop_is_interrupted_at_the_timeout_and_the_kernel_lives_on(kernel):
    start = time.monotonic()
    with pytest.raises(Interrupted):
        run(kernel, "while True:\n    pass", timeout=1.0)
    assert time.monotonic() - start < 1.0 + GRACE_S
    assert run(kernel, "print('alive')") == "alive\n"


def test_an_interrupt_names_the_running_functions_which_stay_stalled_until_redefined(kernel):
    run(kernel, "def spin(x):\n    while True:\n        pass\n\ndef other(x):\n    return x\n")
    with pytest.raises(Interrupted) as stopped:
        run(kernel, "spin(1)", timeout=1.0)
    assert stopped.value.running == ["spin"]
    kernel.request(protocol.Stall(0, {"spin": ("timed out", "spin looped")}), 20, Answers())
    ask = protocol.AskNames(0, ("spin", "other"))
    assert kernel.request(ask, 20, Answers()).stalled == {"spin": ("timed out", "spin looped")}
    run(kernel, "def spin(x):\n    return x\n")
    assert kernel.request(ask, 20, Answers()).stalled == {}


def test_a_loop_that_ignores_the_interrupt_is_killed(kernel):
    source = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
    start = time.monotonic()
    with pytest.raises(KernelDied, match="ignored the interrupt"):
        run(kernel, source, timeout=1.0)
    assert time.monotonic() - start < 1.0 + 5.0
    with pytest.raises(KernelDied):
        run(kernel, "print('never')")


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import os; os._exit(7)", "exited with code 7"),
        ("import ctypes; ctypes.string_at(0)", "SIGSEGV"),
    ],
)
def test_a_dead_kernel_says_why(kernel, source, reason):
    with pytest.raises(KernelDied, match=reason):
        run(kernel, source)


def test_memory_is_limited_without_killing_the_kernel(kernel):
    assert "MemoryError" in run(kernel, "x = bytearray(8 << 30)")
    assert run(kernel, "print('alive')") == "alive\n"


def test_a_trusted_function_works_in_its_own_case_only(kernel):
    answers = Answers()
    run(
        kernel,
        "import numpy as np\n"
        "def witness(norm_fn):\n"
        "    global kept\n"
        "    kept = norm_fn\n"
        "    return bool(np.allclose(norm_fn(np.arange(6.0).reshape(2, 3)).mean(-1), 0))\n"
        "def later(x):\n"
        "    return kept(x)\n",
        answers=answers,
    )
    own = Case("witness", "call", (Ref("layer_norm"),))
    answers.begin_case(own)
    reply = kernel.request(protocol.RunCase(0, own, {"witness": "witness"}), 20, answers)
    assert reply.result.output is True and answers.end_case()[0] == ()
    other = Case("later", "call", (np.ones((2, 3)),))
    answers.begin_case(other)
    reply = kernel.request(protocol.RunCase(0, other, {"later": "later"}), 20, answers)
    noted, _, _ = answers.end_case()
    assert reply.result.error[0].endswith("Unavailable")
    assert noted == ("normlab.layer_norm (a trusted function kept from an earlier check)",)


WORKER = """\
import sys, time
from normlab.course.grader import isolation as iso
from normlab.course.grader.kernel_process import start_kernel
isolation = iso.Isolation(sys.argv[1], expose=tuple(iso.python_paths()), uid_base=int(sys.argv[2]))
kernel = start_kernel(isolation, 1, None)
print(kernel.pid, flush=True)
time.sleep(600)
"""


def test_a_kernel_dies_with_its_grading_worker(tmp_path):
    """A grader killed mid-run leaves no kernel behind. (Its kernel's private folder stays,
    as nothing runs to remove it: the test gives it a TMPDIR of its own, not /tmp.)"""
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, MODE, str(UID_BASE)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    try:
        pid = int(worker.stdout.readline())
        assert os.path.exists(f"/proc/{pid}")
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        worker.stdout.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists(f"/proc/{pid}"):
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}")
