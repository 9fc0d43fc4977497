"""The adversarial submissions: one per threat class, each with its outcome fixed in advance.

Every attacker submits ps2 with a correct `row_stats` (6 points: cells stats_*) and, unless the
attack brings its own, a `layer_norm` that is not written (it raises NotImplementedError, 0 of
19 points). So an attack that fails scores exactly 6.0, and one that fools the grader scores
more. Some attacks come with correct functions, to show that what they do costs them nothing
else (the expected score is then 25.0). `reason` is a piece of the notebook's grading record
(kernel death, timeout); `output` a piece of text the attack prints where the autograded
notebook shows it; `live_in_kernel` marks the attacks that fool plain `nbgrader autograde`
(checked by test_liveness.py, so the defence is shown to matter).

`{course}` and `{repo}` in a source are replaced by the absolute paths of the course and of this
repository: the attacker is assumed to know where they live.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cells import PS2
from demo_course import LAYER_NORM, ROW_STATS

from normlab.grading.catalog import cells_of

STATS_CELLS = tuple(spec.grade_id for spec in cells_of(PS2.stats_axis))  # row_stats' cells
LN_CELLS = tuple(spec.grade_id for spec in cells_of(PS2.axis))  # layer_norm's
UNWRITTEN_LN = "def layer_norm(x, gamma, beta, eps=1e-5):\n    raise NotImplementedError()\n"
TOTAL = 25.0
STATS_POINTS = 6.0
# a layer_norm that returns zeros: right shape and dtype, untouched input, stable, by hand;
# its rows have mean zero, so centring is ticked on visible and hidden inputs alike (a tick is
# a true statement, and the rubric's one rule for both: issue 46, item 2); wrong on every other
# cell (3 + 2 + 2 + 2 + 2 points)
ZEROS_LN = "def layer_norm(x, gamma, beta, eps=1e-5):\n    return np.zeros_like(x)\n"
ZEROS_FAILED = tuple(
    spec.grade_id
    for spec in (
        PS2.axis,
        PS2.population_variance,
        PS2.eps_placement,
        PS2.gain_and_bias,
        PS2.independence,
    )
)
ZEROS_SCORE = TOTAL - 11.0


@dataclass(frozen=True)
class Attack:
    """One adversarial submission and what grading it must give."""

    name: str
    threat: str  # the threat class, as in instructors/threat_model.md
    prepend: tuple[str, ...] = ()  # cells right after the setup cell
    row_stats: str = ROW_STATS
    layer_norm: str = UNWRITTEN_LN
    score: float = STATS_POINTS
    failed: tuple[str, ...] = LN_CELLS  # exactly the grade cells that must score 0
    reason: str = ""  # in the notebook's grading record
    output: str = ""  # in the autograded notebook's outputs
    live_in_kernel: bool = False
    notebook_edits: dict = field(default_factory=dict)


READ_SOLUTIONS = """\
import glob, json, os
def _candidates():  # the likely places first: a search of /tmp can outlast the cell's time
    yield "../../../solutions/ps2_layer_norm/ps2_layer_norm.ipynb"
    yield "{course}/solutions/ps2_layer_norm/ps2_layer_norm.ipynb"
    yield "{repo}/solutions/ps2_layer_norm/ps2_layer_norm.ipynb"
    for _cwd in glob.glob("/proc/*/cwd"):  # the grader's own processes run in the course
        try:
            yield os.readlink(_cwd) + "/solutions/ps2_layer_norm/ps2_layer_norm.ipynb"
        except OSError:
            pass
    yield from glob.glob("/tmp/**/solutions/ps2_layer_norm/*.ipynb", recursive=True)[:5]
for _path in _candidates():
    try:
        with open(_path) as _handle:
            _source = json.load(_handle)
    except OSError:
        continue
    for _cell in _source["cells"]:
        if _cell["metadata"].get("nbgrader", {}).get("grade_id") == "layer_norm_answer":
            exec("".join(_cell["source"]))
    print("SOLUTIONS FOUND", _path)
    break
else:
    print("SOLUTIONS NOT FOUND")
"""

WRITE_GRADEBOOK = """\
import sqlite3
for _path in ["../../../gradebook.db", "{course}/gradebook.db"]:
    try:
        _db = sqlite3.connect(_path, timeout=1)
        _db.execute("UPDATE grade SET manual_score = 100")
        _db.commit()
        print("GRADEBOOK WRITTEN", _path)
    except Exception as _exc:
        print("GRADEBOOK REFUSED", _path, type(_exc).__name__)
"""

WRITE_OTHERS = """\
import glob, os
_written = []
for _pattern in ["{course}/submitted/*/ps2_layer_norm/*.ipynb",
                 "{course}/autograded/*/ps2_layer_norm/*.ipynb",
                 "{course}/exercises/ps2_layer_norm/*.ipynb",
                 "{course}/solutions/ps2_layer_norm/*.ipynb",
                 "{repo}/lib/normlab/layer_norm.py"]:
    for _path in glob.glob(_pattern):
        try:
            with open(_path, "a") as _handle:
                _handle.write("tampered")
            _written.append(_path)
        except OSError:
            pass
print("OTHERS WRITTEN", _written if _written else "none")
"""

FORK_BOMB = """\
import os, time
_children = 0
try:
    for _ in range(500):
        _pid = os.fork()
        if _pid == 0:
            os.setsid()  # try to escape the kernel's process group
            time.sleep(3600)
            os._exit(0)
        _children += 1
except OSError as _exc:
    print("FORK STOPPED after", _children, type(_exc).__name__)
"""

NETWORK = """\
import socket
for _host, _port in [("127.0.0.1", 5432), ("127.0.0.1", 22), ("8.8.8.8", 53)]:
    try:
        socket.create_connection((_host, _port), timeout=2).close()
        print("NETWORK OPEN", _host, _port)
    except OSError as _exc:
        print("NETWORK CLOSED", _host, _port, type(_exc).__name__)
"""

SIGNALS = """\
import os, signal
for _target in (os.getppid(), 1, -1):
    try:
        os.kill(_target, signal.SIGKILL)
        print("SIGNAL SENT", _target)
    except OSError as _exc:
        print("SIGNAL REFUSED", _target, type(_exc).__name__)
"""

PATCH_CHECKERS = """\
import dataclasses
import normlab.grading as _grading
for _specs in _grading.CHECKS.values():
    for _gid, _spec in list(_specs.items()):
        _specs[_gid] = dataclasses.replace(_spec, judge=lambda *_: _grading.Verdict("passed"))
"""

HIDE_TRIPWIRE = """\
import sys
_hook = [None]
sys.setprofile = lambda f: _hook.__setitem__(0, f)
sys.getprofile = lambda: _hook[0]
from normlab import layer_norm as _reference_layer_norm
"""

ATTACKS = (
    Attack(
        "redefine_check",
        "tampering with the checks",
        prepend=("def check(*args, **kwargs):\n    return None\n",),
        live_in_kernel=True,
    ),
    Attack("patch_checkers", "tampering with the checks", (PATCH_CHECKERS,), live_in_kernel=True),
    Attack(
        "patch_builtins",
        "tampering with the checks",
        ("import builtins\nbuiltins.zip = lambda *args, **kwargs: iter(())\n",),
        score=0.0,  # the patch breaks the kernel's own harness: the patcher loses every cell
        failed=STATS_CELLS + LN_CELLS,
        reason="grading harness failed",
        live_in_kernel=True,
    ),
    Attack(
        "zeros_control",
        "none: the control for the next attack",
        layer_norm=ZEROS_LN,
        failed=ZEROS_FAILED,
        score=ZEROS_SCORE,
    ),
    Attack(
        "patch_numpy_and_reference",
        "tampering with the checks",
        (
            "import numpy.testing, normlab\n"
            "np.allclose = lambda *a, **k: True\n"
            "np.isclose = lambda a, b, *r, **k: np.ones(np.shape(a), bool)\n"
            "np.testing.assert_allclose = lambda *a, **k: None\n"
            "np.array_equal = lambda *a, **k: True\n"
            "normlab.layer_norm = lambda x, *a, **k: np.zeros_like(x)\n",
        ),
        layer_norm=ZEROS_LN,
        failed=ZEROS_FAILED,
        score=ZEROS_SCORE,
    ),
    Attack(
        "read_solutions",
        "reading the source",
        (READ_SOLUTIONS,),
        layer_norm="# layer_norm: the instructor's, if the cell above found it\n",
        output="SOLUTIONS NOT FOUND",
        live_in_kernel=True,
    ),
    Attack("write_gradebook", "writing the gradebook", (WRITE_GRADEBOOK,), output="REFUSED"),
    Attack("write_others", "writing others' files", (WRITE_OTHERS,), output="WRITTEN none"),
    Attack(
        "infinite_loop",
        "running forever",
        row_stats="def row_stats(x):\n    while True:\n        pass\n",
        layer_norm=LAYER_NORM,
        score=TOTAL - STATS_POINTS,
        failed=STATS_CELLS,
        reason="longer than",
    ),
    Attack(
        "layer_norm_never_returns",
        "running forever",
        layer_norm="def layer_norm(x, gamma, beta, eps=1e-5):\n    while True:\n        pass\n",
        reason="longer than",
    ),
    Attack(
        "deaf_loop",
        "running forever",
        layer_norm=(
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    import signal\n"
            "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "    while True:\n"
            "        pass\n"
        ),
        reason="ignored the interrupt",
    ),
    Attack(
        "memory_hog",
        "exhausting memory",
        ("_hog = bytearray(12 << 30)\n",),
        layer_norm=(
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    return np.ones((1 << 28, 16)) * np.asarray(x).sum()\n"
        ),
    ),
    Attack(
        "exit_kernel",
        "killing the kernel",
        layer_norm="def layer_norm(x, gamma, beta, eps=1e-5):\n    import os\n    os._exit(3)\n",
        reason="exited with code 3",
    ),
    Attack(
        "segfault",
        "killing the kernel",
        layer_norm=(
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    import ctypes\n"
            "    return ctypes.string_at(0)\n"
        ),
        reason="SIGSEGV",
    ),
    Attack(
        "fork_bomb",
        "exhausting processes",
        (FORK_BOMB,),
        layer_norm=LAYER_NORM,
        score=TOTAL,
        failed=(),
        output="FORK STOPPED",
    ),
    Attack(
        "signals",
        "signalling the grader",
        (SIGNALS,),
        layer_norm=LAYER_NORM,
        score=TOTAL,
        failed=(),
        output="SIGNAL REFUSED",
    ),
    Attack(
        "network",
        "reaching the network",
        (NETWORK,),
        layer_norm=LAYER_NORM,
        score=TOTAL,
        failed=(),
        output="NETWORK CLOSED",
    ),
    Attack(
        "fake_all_passed",
        "printing a fake pass",
        ('print("All tests passed!")\nprint("Score: 25 / 25")\n',),
        layer_norm=(
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            '    print("All tests passed!")\n'
            "    raise NotImplementedError()\n"
        ),
        output="All tests passed!",
    ),
    Attack(
        "huge_output",
        "flooding the output",
        ('print("x" * 50_000_000)\n',),
        layer_norm=LAYER_NORM,
        score=TOTAL,
        failed=(),
        output="truncated",
    ),
    Attack(
        "reuse_normlab",
        "reusing the reference",
        row_stats="import normlab\n\n\ndef row_stats(x):\n    return normlab.row_stats(x)\n",
        layer_norm=(
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    return normlab.layer_norm(x, gamma, beta, eps)\n"
        ),
        score=0.0,  # reuse voids each function's own work (c.NormlabGrading.reuse_voids)
        failed=STATS_CELLS + LN_CELLS,
    ),
    Attack(
        "reuse_hidden_from_tripwire",
        "reusing the reference",
        (HIDE_TRIPWIRE,),
        layer_norm=(
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    return _reference_layer_norm(x, gamma, beta, eps)\n"
        ),
        score=STATS_POINTS,  # layer_norm's work is voided, row_stats' stands
        failed=LN_CELLS,
        live_in_kernel=True,
    ),
    Attack(
        "reuse_torch",
        "reusing the reference",
        layer_norm=(
            "import torch\n\n\n"
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    t = torch.nn.functional.layer_norm(\n"
            "        torch.as_tensor(x), x.shape[-1:], torch.as_tensor(gamma),\n"
            "        torch.as_tensor(beta), eps)\n"
            "    return t.numpy()\n"
        ),
    ),
    Attack(
        "tampered_notebook",
        "editing the notebook",
        notebook_edits={
            "delete": PS2.axis.grade_id,
            "replace_source": (PS2.centering.grade_id, "pass\n"),
            "points": (PS2.numerics.grade_id, 100),
            "fake_output": PS2.eps_placement.grade_id,
        },
    ),
)

BY_NAME = {attack.name: attack for attack in ATTACKS}
