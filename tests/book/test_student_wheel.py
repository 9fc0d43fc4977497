"""The student download holds no answer, and runs the visible checks as the full normlab does.

`make student` builds it (lib/normlab/course/download/source.py) into _build/student/downloads,
which the book publishes as the site's downloads/ (tests/e2e/test_student_download.py
compares the two).
Here, without building the book:

- the wheel and the bundle, scanned: only the checks' modules, the stubs of the reference and
  the recording; no `def` (or class) of anything a problem set asks for, a misconception
  variant or a planted wrong LayerNorm but a stub; no case maker, no hidden case (its inputs,
  the names of its planted LayerNorms, the shapes written in its batteries), nothing of the
  answer key, course/, bench/, training/;
- a fresh venv made from the download (python -m venv, pip install the wheel: NumPy only), in
  which every public callable of the installed packages is called on a probe input (arguments
  by name, `PROBE_VALUES`): none returns what the reference returns for an answer there;
  only ps8's probes need torch, which the venv lacks, and ps8's setup cell says how to get it;
- in that venv, every visible check over the verdict bank (tests/grading/test_verdicts.py's
  submissions that are code) gives the verdict and the message the full normlab gives, but
  for the submissions that cannot run there, each for its reason (`CANNOT_COMPARE`).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from student_route import BUNDLE, bundle_members, clean_env, installed, run, wheel_members

sys.path.insert(0, str(Path(__file__).parents[1] / "grading"))
from course_helpers import TEST_STUDENT, run_sources
from test_verdicts import submission_sources

import normlab
from normlab.answer_key import formula_outputs, trusted, wrong_implementations
from normlab.course.download import recording as student_recording
from normlab.course.download import source as student_download
from normlab.grading import (
    ASSIGNMENTS,
    CHECKS,
    DEFAULT_SEED,
    pools,
    recorded,
    run_case,
    run_check,
)
from normlab.grading.oracle import fingerprint
from normlab.grading.session import CheckerError
from normlab_sandbox import wire
from normlab_sandbox.cases import Ref

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
# functions a problem set asks for, and what is one flag from one: not defined but as a stub
ASKED = {name for specs in CHECKS.values() for spec in specs.values() for name in spec.targets}
WRONG = (*wrong_implementations.GROUP_NORM, *wrong_implementations.BATCH_NORM_BACKWARD)
ANSWERS = (
    ASKED
    | {"LayerNorm", "forward"}  # ps8_in_a_model's module (torch_twins.LayerNorm today)
    | {fn.__name__ for objects in student_recording.stub_functions().values() for fn in objects}
    | {name for name in dir(normlab.red_team) if not name.startswith("_")}
    | {f.__name__ for f in WRONG}
    | {
        "formula_outputs",
        "all_outputs",
        "statistics",
        "moments",
        "_scale",
        "_group_norm",
        "_layer_norm_alt",
        "_norm_fn",
    }
    | {f.__name__ for f in trusted.PLANTED.values()}
)
# a bank submission that cannot give the full normlab's verdicts in the download, and why
CANNOT_COMPARE = {
    "torch": "it calls torch, which the download's venv does not have (nor a grading kernel)",
}


@pytest.fixture(scope="module")
def wheel(student_downloads) -> Path:
    (found,) = student_downloads.glob("normlab-*-py3-none-any.whl")
    return found


@pytest.fixture(scope="module")
def members(wheel) -> dict[str, bytes]:
    return wheel_members(wheel)


@pytest.fixture(scope="module")
def sources(members) -> dict[str, ast.Module]:
    return {name: ast.parse(data) for name, data in members.items() if name.endswith(".py")}


def test_the_wheel_holds_the_checks_the_stubs_and_the_recording(members):
    packages = {name.split("/")[0] for name in members}
    assert packages == {"normlab", "normlab_sandbox", *(p for p in packages if ".dist-info" in p)}
    folders = {name.rsplit("/", 1)[0] for name in members if name.startswith("normlab/")}
    assert folders == {"normlab", "normlab/grading", "normlab/grading/normchecks"}
    assert not [name for name in members if "answer_key" in name], "the answer key shipped"
    assert "normlab/grading/recorded.json" in members
    top = {
        name.split("/")[1][:-3] for name in members if name.count("/") == 1 and "normlab/" in name
    }
    assert top == {"__init__", *student_recording.reference_modules()}
    sandbox = {name.split("/")[1][:-3] for name in members if name.startswith("normlab_sandbox/")}
    assert sandbox == set(student_download.SANDBOX)
    shipped = {name for name in members if name.startswith("normlab/grading/")}
    checks = Path(normlab.__file__).parent / "grading"
    # the checks' folder, whole and as it is (with the pools of per-student variants)
    for path in [*checks.rglob("*.py"), *checks.glob("*_pool.json")]:
        name = path.relative_to(checks.parent.parent).as_posix()
        assert members[name] == path.read_bytes(), name
        shipped.discard(name)
    assert shipped == {"normlab/grading/recorded.json"}


def _is_stub(node) -> bool:
    """A stub: a function whose body (after its docstring) only raises, or only words the
    oracle's question and hands it on (`self._put(...)`, `....answer(...)`: the download's
    oracle replays recorded answers), or a class whose only method raises."""
    body = [s for s in node.body if not isinstance(getattr(s, "value", None), ast.Constant)]
    if isinstance(node, ast.ClassDef):
        (init,) = body
        return init.name == "__init__" and isinstance(init.body[-1], ast.Raise)
    if [type(s) for s in body] == [ast.Raise]:
        return True
    (last,) = body
    callee = ast.unparse(last.value.func) if isinstance(last, ast.Return) else ""
    return callee.rsplit(".", 1)[-1] in ("_put", "answer")


def test_no_answer_is_defined_outside_a_stub(sources):
    defined = {}
    for name, tree in sources.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in ANSWERS:
                defined.setdefault(node.name, []).append(name)
                assert _is_stub(node), f"{name} defines {node.name}, not as a stub"
    # the reference's public names are there, as stubs (the notebooks import normlab)
    assert {"layer_norm", "row_stats", "batch_norm", "rms_norm", "wrong_axis"} <= set(defined)


def test_no_case_maker_and_no_hidden_case_in_the_wheel(members, sources):
    for name, tree in sources.items():
        for node in ast.walk(tree):  # a battery draws from a random stream: none here
            args = getattr(node, "args", None)
            params = {a.arg for a in args.args} if isinstance(args, ast.arguments) else set()
            assert "rng" not in params, f"{name}: a case maker"
    text = "\n".join(data.decode(errors="replace") for data in members.values())
    kept = recorded.Recording.loads(members["normlab/grading/recorded.json"])
    kept_inputs = {fingerprint((a,)) for c in _cases(kept) for a in c.args}
    hidden_only = 0
    for assignment, specs in CHECKS.items():
        for grade_id, spec in specs.items():
            for (variant, visible), (_, hidden) in zip(
                _batteries(spec, False), _batteries(spec, True), strict=True
            ):
                shown = {fingerprint((case,)) for case in visible}
                kept_here = _kept(kept, spec, variant)
                assert {fingerprint((c,)) for c in kept_here} == shown, grade_id
                hidden_only += _hidden_only(hidden, shown, kept, kept_inputs, text, assignment)
    assert hidden_only > 100  # the scan has teeth


def _hidden_only(hidden, shown, kept, kept_inputs, text, assignment) -> int:
    """Checks the hidden cases of one battery; returns how many the visible one lacks."""
    count = 0
    for case in hidden:
        if fingerprint((case,)) in shown:
            continue
        count += 1
        for arg in case.args:  # a LayerNorm only the graders hold, by its name
            timer = isinstance(arg, Ref) and arg.name.startswith("scripted_timer.")
            if isinstance(arg, Ref) and not timer and arg.name not in kept.refs:
                assert arg.name not in text, f"{assignment} {arg.name}"
        x = case.args[0] if case.args else None
        if isinstance(x, np.ndarray) and x.size > 1:
            assert fingerprint((x,)) not in kept_inputs, assignment
    return count


def _shapes(hidden: bool) -> set[tuple]:
    return {
        arg.shape
        for specs in CHECKS.values()
        for spec in specs.values()
        for _, cases in _batteries(spec, hidden)
        for case in cases
        for arg in case.args
        if isinstance(arg, np.ndarray)
    }


def test_no_shape_only_the_hidden_battery_uses_is_written_in_the_wheel(members):
    """A hidden battery's shapes are written in its batteries' source (the answer key); the
    wheel's source has none of them (a shape a visible case uses too may appear)."""
    hidden_only = _shapes(True) - _shapes(False)
    code = "\n".join(data.decode() for name, data in members.items() if name.endswith(".py"))
    assert not [shape for shape in hidden_only if repr(shape) in code]
    batteries = Path(normlab.__file__).parent / "answer_key" / "batteries"
    source = "\n".join(p.read_text(encoding="utf-8") for p in batteries.rglob("*.py"))
    assert len([shape for shape in hidden_only if repr(shape) in source]) > len(hidden_only) / 2


def _cases(kept):
    """Every recorded case (a check that varies keeps one battery per variant of its pool)."""
    batteries = [b for specs in kept.cases.values() for b in specs.values()]
    flat = [c for b in batteries for c in (b.values() if isinstance(b, dict) else [b])]
    return [c for cases in flat for c in cases]


def _batteries(spec, hidden: bool) -> list[tuple[dict | None, list]]:
    """(variant, cases) of `spec` at the default seed: one per variant of its pool, if any."""
    variants = pools.variants(spec.assignment) if spec.varies else [None]
    own = lambda v: {"variant": v} if v is not None else {}  # noqa: E731
    return [(v, spec.make_cases(DEFAULT_SEED, hidden=hidden, **own(v))) for v in variants]


def _kept(kept, spec, variant) -> list:
    cases = kept.cases[spec.assignment][spec.grade_id]
    return cases[variant["slot"]] if variant is not None else cases


def test_the_bundle_holds_the_wheel_the_released_notebooks_and_a_readme(student_downloads, wheel):
    bundle = bundle_members(student_downloads / f"{BUNDLE}.zip")
    notebooks = {f"{a}.ipynb" for a in ASSIGNMENTS}
    assert set(bundle) == {"README.txt", wheel.name} | notebooks
    assert bundle[wheel.name] == wheel.read_bytes()
    for assignment in ASSIGNMENTS:
        released = REPO / "exercises" / assignment / f"{assignment}.ipynb"
        assert bundle[f"{assignment}.ipynb"] == released.read_bytes()


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """python -m venv, then pip install the wheel; returns the venv's python."""
    home = tmp_path_factory.mktemp("fresh")
    run([sys.executable, "-m", "venv", str(home / "env")], home, clean_env())
    python = home / "env" / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], home, clean_env())
    return python


@pytest.mark.network
def test_the_venv_holds_normlab_and_numpy_only(venv):
    assert installed(venv) - {"pip", "setuptools", "wheel"} == {"normlab", "numpy"}


def _in_venv(python: Path, script: str, payload, tmp_path: Path):
    """Run `script` in the venv (isolated: no PYTHONPATH, not from the repository), giving it
    `payload` and taking back its result, both wire-encoded, through files."""
    given, taken = tmp_path / "given", tmp_path / "taken"
    given.write_bytes(wire.dumps(payload, recorded.REGISTRY))
    (tmp_path / "script.py").write_text(textwrap.dedent(script))
    command = [str(python), "-I", str(tmp_path / "script.py"), str(given), str(taken)]
    done = subprocess.run(command, cwd=tmp_path, env=clean_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return wire.loads(taken.read_bytes(), recorded.REGISTRY)


PROBE_VALUES = {
    "x": np.random.default_rng(20260611).normal(size=(4, 6)) * 3.0 + 1.0,
    "dy": np.random.default_rng(20260612).normal(size=(4, 6)),
    "gamma": np.random.default_rng(20260613).uniform(0.5, 2.0, 6),
    "beta": np.random.default_rng(20260614).normal(size=6),
    "eps": 1e-5,
    "alpha": 0.5,
    "num_groups": 2,
    "y": np.random.default_rng(20260615).normal(size=(4, 6)),
    "z": np.random.default_rng(20260616).normal(size=(4, 6)),
    "kind": "layer_norm",
    "d_model": 512,
    "ndim": 2,
    "seed": 0,
    "rtol": 1e-6,
    "atol": 1e-8,
    "value": 1.5,
    "r": (0, 1),
    "name": "x",
    "shape": (4, 6),
    "durations": (1.0, 2.0),
}

PROBE = """
    import importlib, inspect, pkgutil, sys
    import numpy as np
    import normlab, normlab_sandbox
    from normlab.grading import backing, recorded
    from normlab_sandbox import wire

    given, taken = sys.argv[1:]
    values = wire.loads(open(given, "rb").read(), recorded.REGISTRY)
    values |= {"norm_fn": lambda x: x, "fn": lambda *a: None, "oracle": backing.current(),
               "rng": np.random.default_rng(0)}
    found = {}

    def probe(where, fn):
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            return
        args, kwargs = [], {}
        for p in params:  # by name; any other parameter without a default gets the probe x
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or (
                p.name not in values and p.default is not p.empty
            ):
                continue
            value = values.get(p.name, values["x"])
            if p.kind is p.POSITIONAL_ONLY:
                args.append(value)
            else:
                kwargs[p.name] = value
        try:
            found[where] = ("returned", fn(*args, **kwargs))
        except BaseException as exc:
            found[where] = ("raised", type(exc).__name__, str(exc)[:300])

    modules, need_torch = [], []
    for package in (normlab, normlab_sandbox):
        modules.append(package)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            try:
                modules.append(importlib.import_module(info.name))
            except ModuleNotFoundError as exc:  # ps8's probes run with the student's torch
                if exc.name != "torch":
                    raise
                need_torch.append(info.name)
    for module in modules:
        for name, obj in sorted(vars(module).items()):
            if name.startswith("_"):
                continue
            if callable(obj) and getattr(obj, "__module__", None) == module.__name__:
                probe(f"{module.__name__}.{name}", obj)  # a function or a class
            elif type(obj).__module__.startswith("normlab") and not inspect.ismodule(obj):
                for attr in dir(obj):  # a public object's public methods (LAYER_NORM, ORACLE)
                    method = getattr(obj, attr, None)
                    if not attr.startswith("_") and inspect.ismethod(method):
                        probe(f"{module.__name__}.{name}.{attr}", method)
    for where, outcome in found.items():  # what cannot travel as data goes as its type
        try:
            wire.dumps(outcome, recorded.REGISTRY)
        except TypeError:
            found[where] = ("returned", wire.Opaque(type(outcome[1]).__name__, "?"))
    taken_data = {"found": found, "need_torch": tuple(need_torch)}
    open(taken, "wb").write(wire.dumps(taken_data, recorded.REGISTRY))
"""


def _answers() -> list:
    """What the reference, the misconception variants and the planted LayerNorms return on
    the probe inputs: no public callable of the download may return one of these."""
    v = PROBE_VALUES
    x, dy, gamma, beta, groups = v["x"], v["dy"], v["gamma"], v["beta"], v["num_groups"]
    alpha = v["alpha"]
    answers = [
        normlab.layer_norm(x),
        normlab.layer_norm(x, gamma, beta),
        normlab.row_stats(x),
        normlab.batch_norm(x),
        normlab.batch_norm(x, gamma, beta),
        normlab.rms_norm(x),
        normlab.rms_norm(x, gamma),
        sys.modules["normlab.rms_norm"].rms_norm_eps_outside(x),
        normlab.layer_norm_backward(dy, x),
        normlab.layer_norm_backward(dy, x, gamma),
        normlab.batch_norm_backward(dy, x),
        normlab.batch_norm_backward(dy, x, gamma),
        normlab.group_norm(x, groups),
        normlab.group_norm(x, groups, gamma, beta),
        normlab.dyt(x, alpha),
        normlab.dyt(x, alpha, gamma, beta),
        normlab.dyt_backward(dy, x, alpha),
        normlab.dyt_backward(dy, x, alpha, gamma),
        *(p.fn(x) for p in normlab.red_team.RED_TEAM.values()),
        *(f(x) for f in trusted.PLANTED.values()),
        *formula_outputs.all_outputs(x, v["eps"]).values(),
        *(f(x, groups) for f in wrong_implementations.GROUP_NORM),
        *(f(dy, x) for f in wrong_implementations.BATCH_NORM_BACKWARD),
    ]
    return answers


def _equal(got, want) -> bool:
    if isinstance(want, tuple):
        return (
            isinstance(got, tuple)
            and len(got) == len(want)
            and all(_equal(g, w) for g, w in zip(got, want, strict=True))
        )
    if not isinstance(got, np.ndarray | float | np.floating):  # dyt's dalpha is one number
        return False
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and np.allclose(got, want, equal_nan=True)


@pytest.mark.network
def test_no_public_callable_of_the_download_computes_an_answer(venv, tmp_path):
    taken = _in_venv(venv, PROBE, PROBE_VALUES, tmp_path)
    found, answers = taken["found"], _answers()
    assert taken["need_torch"] == ("normlab_sandbox.module_probes",)  # the venv has no torch
    computing = [
        where
        for where, outcome in found.items()
        if outcome[0] == "returned" and any(_equal(outcome[1], a) for a in answers)
    ]
    assert computing == [], f"these compute an answer: {computing}"
    stubs = {
        w: o for w, o in found.items() if w.split(".")[1] in student_recording.reference_modules()
    }
    assert len(stubs) > 20
    for where, outcome in stubs.items():  # each reference name: a stub that raises
        assert outcome[0] == "raised" and outcome[1] == "NotInDownload", (where, outcome)
    artifact = REPO / "test-artifacts" / "student-probe.json"
    artifact.parent.mkdir(exist_ok=True)
    summary = {w: list(o[:1]) + [str(x)[:200] for x in o[1:]] for w, o in sorted(found.items())}
    artifact.write_text(json.dumps(summary, indent=1))


VERDICTS = """
    import contextlib, io, sys
    from functools import partial
    from normlab.grading import CHECKS, recorded, run_case, run_check
    from normlab.grading.session import CheckerError
    from normlab_sandbox import wire

    given, taken = sys.argv[1:]
    bank = wire.loads(open(given, "rb").read(), recorded.REGISTRY)
    found = {}
    for name, (assignment, sources) in sorted(bank.items()):
        namespace = {}
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for source in sources:
                try:
                    exec(compile(source, "<cell>", "exec"), namespace)
                except Exception:
                    pass
            for grade_id, spec in CHECKS[assignment].items():
                try:
                    verdict = run_check(spec, partial(run_case, namespace))
                    found[name, grade_id] = (verdict.category, verdict.message)
                except CheckerError as exc:
                    found[name, grade_id] = ("checker error", str(exc))
    open(taken, "wb").write(wire.dumps(found, recorded.REGISTRY))
"""


def _full_normlab(bank: dict) -> dict:
    """The same, in this process, with the full normlab (visible batteries, same order)."""
    found = {}
    for name, (assignment, sources) in sorted(bank.items()):
        with contextlib.redirect_stdout(io.StringIO()):  # the notebooks' try-it cells print
            namespace = run_sources(sources)
        for grade_id, spec in CHECKS[assignment].items():
            try:
                verdict = run_check(spec, lambda case, ns=namespace: run_case(ns, case))
                found[name, grade_id] = (verdict.category, verdict.message)
            except CheckerError as exc:
                found[name, grade_id] = ("checker error", str(exc))
    return found


@pytest.mark.network
def test_the_visible_checks_give_the_full_normlabs_verdicts_over_the_bank(venv, tmp_path):
    bank = {  # ps1's STUDENT line names the test student, for the venv's run as for ours
        name: (assignment, [student_recording.as_student(s, TEST_STUDENT) for s in sources])
        for name, (assignment, sources) in submission_sources().items()
    }
    torch = {name for name, (_, sources) in bank.items() if "torch" in "\n".join(sources)}
    assert torch and set(CANNOT_COMPARE) - {"torch"} <= set(bank)
    compared = [name for name in bank if name not in torch and name not in CANNOT_COMPARE]
    # a witness that calls normlab's audit (a stub here) is voided in both, by the same message
    audit = "ps3_axes/bank:bn-eps-outside-and-witness-from-audit"
    with warnings.catch_warnings():  # NumPy's default error state, as in the venv's kernel
        warnings.simplefilter("ignore")  # (run_case records the student's code's warnings)
        want = _full_normlab({name: bank[name] for name in [*compared, audit]})
    got = _in_venv(venv, VERDICTS, bank, tmp_path)
    assert set(got) == {(name, g) for name, (a, _) in bank.items() for g in CHECKS[a]}
    differ = {key for key in want if got[key] != want[key]}
    assert len(compared) > 40
    assert not {key for key in differ if key[0] in compared}, [
        (key, want[key], got[key]) for key in sorted(differ) if key[0] in compared
    ][:5]
    for grade_id in CHECKS["ps3_axes"]:
        if grade_id.startswith("witness_"):
            assert got[audit, grade_id] == want[audit, grade_id]
            assert "normlab.audit" in got[audit, grade_id][1], got[audit, grade_id]


TORCH_MISSING = """
    import sys
    from normlab.grading import use_assignment

    given, taken = sys.argv[1:]
    use_assignment("ps2_layer_norm")  # the other problem sets need no torch
    try:
        use_assignment("ps8_in_a_model")
    except ModuleNotFoundError as exc:
        open(taken, "wb").write(str(exc).encode())
"""


def test_without_torch_ps8s_setup_cell_says_how_to_install_it(venv, tmp_path):
    given, taken = tmp_path / "given", tmp_path / "taken"
    given.write_bytes(b"")
    (tmp_path / "script.py").write_text(textwrap.dedent(TORCH_MISSING))
    command = [str(venv), "-I", str(tmp_path / "script.py"), str(given), str(taken)]
    done = subprocess.run(command, cwd=tmp_path, env=clean_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    message = taken.read_text()
    assert "ps8_in_a_model needs torch" in message
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in message
