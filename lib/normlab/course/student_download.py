"""The student download: normlab's checks on recorded visible batteries, with no answer inside.

`make student` builds it with the packaging tools (issue 19), into `_build/student/downloads/`,
which the book publishes (`html_extra_path` in _config.yml) for exercises/getting_started.md:

    python -m normlab.course student-source _build/student-src      # the source tree (here)
    python -m build --wheel --no-isolation --outdir _build/student/downloads _build/student-src
    python -m normlab.course student-bundle _build/student/downloads  # + notebooks, README

The source tree (`write_source`) holds
- `normlab_sandbox`'s `SANDBOX` modules: a case run under guards, the wire's data codec;
- `normlab.grading` but `GRADERS_ONLY` (the reference's private copy, the oracle and what backs
  it, the trusted callables, nbgrader's feedback step), with the body of every case-making
  function (one with a parameter `rng`: a battery's generator, hidden extras included, or a
  helper of one) replaced by a `raise` (`strip_case_makers`);
- `normlab/grading/recorded.json`, the recording (`record`; `normlab.grading.recording`
  replays it, and is what tells the package it is a download);
- `normlab/__init__.py` and, for each module of the reference, a module of the same name whose
  public functions are stubs with the reference's names and parameters that return
  `recording.call(...)` (so `import normlab` works as the notebooks use it, and a student's
  function that calls one is reported by the tripwire exactly as at grading);
- nothing of course/, bench/, training/ or the chapters' modules.

The recording (`record`) is made from whatever `CHECKS` holds, in the full normlab: for every
check, its visible battery; the course's solution (`solutions/<ps>/<ps>.ipynb`, all but its
test cells) run on it, every trusted LayerNorm a check hands over wrapped so that each call the
solution makes (ps3's witness) is recorded; the judge judging the solution's results, then,
case by case, a wrong result in place of one (`wrong_results`), through an oracle that records
every question and answer; and, for a case whose target is a public normlab function, that
function on the case's own arguments. A new check or a new visible case needs a rebuild, no
more (make rebuilds the download when anything under lib/, solutions/ or exercises/ changes).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.metadata
import inspect
import io
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import nbformat
import numpy as np

import normlab
from normlab.grading import ASSIGNMENTS, CHECKS, DEFAULT_SEED, recording, reference, trusted
from normlab.grading.oracle import LIVE
from normlab_sandbox import guarded
from normlab_sandbox.cases import Ref, Result

LIB = Path(normlab.__file__).resolve().parents[1]
REPO = LIB.parent
SANDBOX = ("__init__", "cases", "guarded", "tripwire", "wire")
GRADERS_ONLY = ("feedback", "oracle", "reference", "trusted", "variant_outputs", "variants_family")
BUNDLE = "normlab-course-student"
EPOCH_ZIP = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip file holds: the same bytes each time
SUMMARY_CELL = "summary"  # the grade_id of each notebook's last cell, summary(globals())
STRIPPED = "not in the student download: the visible cases are recorded (recording.py)"


class BuildError(Exception):
    """The download cannot be built as the course promises (the message says why)."""


# --- the recording ------------------------------------------------------------------------


def answer_cells(nb) -> list[str]:
    """The sources of a notebook's code cells but its test cells and its summary cell."""
    cells = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        is_test = meta.get("grade") and not meta.get("solution")
        if cell.cell_type == "code" and not is_test and meta.get("grade_id") != SUMMARY_CELL:
            cells.append(cell.source)
    return cells


def solution_namespace(assignment: str) -> dict:
    """The course's solution: the source notebook's cells run here (their output kept quiet)."""
    path = REPO / "solutions" / assignment / f"{assignment}.ipynb"
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for source in answer_cells(nbformat.read(path, as_version=4)):
            exec(compile(source, f"<{path.name}>", "exec"), namespace)  # noqa: S102 (ours)
    return namespace


def library_name(fn) -> str:
    """A reference function's name as a student calls it, after "normlab.": "layer_norm" for
    what normlab exports, else "<module>.<function>" ("red_team.wrong_axis")."""
    if getattr(normlab, fn.__name__, None) is fn:
        return fn.__name__
    return f"{fn.__module__.removeprefix('normlab.')}.{fn.__name__}"


def public_function(path: str):
    """normlab's function at dotted `path` ("layer_norm", "red_team.wrong_axis"), or None."""
    found = normlab
    for part in path.split("."):
        found = getattr(found, part, None)
    return found if inspect.isfunction(found) else None


class Recorder:
    """Records answers by question: the oracle's, library calls, trusted LayerNorms' calls."""

    def __init__(self, signatures: dict) -> None:
        self.signatures = signatures
        self.answers: dict = {}
        self.refs: dict = {}
        self.norm_inputs: list = []  # every input a trusted LayerNorm was called on
        self.failures: list[str] = []  # judges that raised on a made-up wrong result
        self._live: dict = {}

    def ask(self, question: tuple, compute):
        key = recording.fingerprint(question)
        if key not in self._live:
            try:
                self._live[key] = (compute(), None)
            except Exception as exc:  # noqa: BLE001 (recorded, and raised again below)
                self._live[key] = (None, exc)
            value, error = self._live[key]
            self.answers[key] = (
                recording.Raised(type(error).__name__, str(error))
                if error
                else recording.storable(value)
            )
        value, error = self._live[key]
        if error:
            raise error
        return value

    def call(self, name: str, fn, args: tuple, kwargs: dict):
        question = recording.call_question(self.signatures[name], name, args, kwargs)
        return recording.copied(self.ask(question, lambda: fn(*args, **kwargs)))

    # the oracle's four questions, as recording.RecordedOracle asks them
    def reference(self, name, *args, **kwargs):
        q = ("reference", name, args, kwargs)
        return self.ask(q, lambda: LIVE.reference(name, *args, **kwargs))

    def family(self, x, eps):
        return self.ask(("family", x, eps), lambda: LIVE.family(x, eps))

    def statistics(self, x):
        return self.ask(("statistics", x), lambda: LIVE.statistics(x))

    def wrong(self, name, *args, **kwargs):
        return self.ask(("wrong", name, args, kwargs), lambda: LIVE.wrong(name, *args, **kwargs))

    def resolve(self, ref: Ref, made: dict):
        """The graders' trusted callable; a LayerNorm of normlab's wrapped to record its calls."""
        live = trusted.resolve(ref, made)
        fn = public_function(ref.name)
        if fn is None:
            return live  # ps6's scripted timer: the download carries it as it is
        name = self.refs[ref.name] = library_name(fn)

        def norm_fn(x):
            self.norm_inputs.append(np.array(x, copy=True))
            return self.call(name, live, (x,), {})

        return norm_fn


def _mapped(value, f):
    """`value` with f applied to every number and numeric array in it (not to bools)."""
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        with np.errstate(all="ignore"):
            return np.asarray(f(value.astype(np.float64))).astype(value.dtype, copy=False)
    if isinstance(value, (int, float, np.number)):
        return float(f(np.float64(value)))
    if isinstance(value, tuple):
        return tuple(_mapped(v, f) for v in value)
    return value


def wrong_results(case, result: Result) -> list[Result]:
    """Results a wrong submission could give for `case`, derived from a right one: every
    number scaled, every number NaN, a bool flipped, the input echoed, an error."""
    wrong = [Result(error=("RuntimeError", "a wrong submission"))]
    if result.error is None:
        wrong.append(replace(result, output=_mapped(result.output, lambda a: a * 1.5 + 0.25)))
        wrong.append(replace(result, output=_mapped(result.output, lambda a: a * np.nan)))
        if isinstance(result.output, (bool, np.bool_)):
            wrong.append(replace(result, output=not result.output))
    arrays = [a for a in case.args if isinstance(a, np.ndarray)]
    if arrays:
        wrong.append(Result(output=arrays[0].copy(), output_type="numpy.ndarray"))
    return wrong


def stub_functions() -> dict[str, list]:
    """Every public function of the reference's modules: the download's stubs, by module."""
    found: dict[str, list] = {}
    for name in reference_modules():
        module = importlib.import_module(f"normlab.{name}")
        found[name] = [
            obj
            for attr, obj in vars(module).items()
            if not attr.startswith("_")
            and (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == module.__name__
        ]
    return found


def reference_modules() -> tuple[str, ...]:
    """The modules normlab/__init__.py imports (with theirs), but the private ones."""
    return tuple(m for m in reference.reference_modules() if not m.startswith("_"))


def record() -> recording.Recording:
    """The recording of every check's visible battery (see the module docstring)."""
    signatures = {
        library_name(fn): recording.signature_of(fn)
        for objects in stub_functions().values()
        for fn in objects
        if inspect.isfunction(fn)
    }
    recorder = Recorder(signatures)
    cases: dict = {}
    with np.errstate(all="ignore"):
        for assignment in ASSIGNMENTS:
            solution = solution_namespace(assignment)
            cases[assignment] = {}
            for grade_id, spec in CHECKS[assignment].items():
                battery = cases[assignment][grade_id] = spec.make_cases(DEFAULT_SEED, hidden=False)
                _record_battery(recorder, spec, battery, solution)
    # every trusted LayerNorm on every input any of them was given: a witness that probes as
    # the course's does, in another order or fewer, is answered whichever norm it is handed
    for ref_name, name in recorder.refs.items():
        live = trusted.resolve(Ref(ref_name), {})
        for x in recorder.norm_inputs:
            with contextlib.suppress(Exception):  # recorded: the replay raises it too
                recorder.call(name, live, (x,), {})
    for failure in recorder.failures:
        print(f"note: a judge raised on a made-up wrong result: {failure}", file=sys.stderr)
    return recording.Recording(cases, recorder.answers, signatures, recorder.refs)


def _record_battery(recorder: Recorder, spec, battery: list, solution: dict) -> None:
    results = [guarded.run_case(solution, case, recorder.resolve) for case in battery]
    spec.judge(battery, results, recorder)
    for k, case in enumerate(battery):
        for wrong in wrong_results(case, results[k]):
            try:
                spec.judge(battery, [*results[:k], wrong, *results[k + 1 :]], recorder)
            except Exception as exc:  # noqa: BLE001 (what it asked before is recorded)
                recorder.failures.append(f"{spec.grade_id}, case {k}: {type(exc).__name__}: {exc}")
    for case in battery:  # a student's function that calls normlab's own, on its arguments
        fn = public_function(case.target) if case.how == "call" else None
        if fn is not None and case.target in normlab.__all__:
            private = reference.PUBLIC[case.target]  # what the graders compute with
            with contextlib.suppress(Exception):  # recorded: the replay raises it too
                recorder.call(library_name(fn), private, case.args, case.kwargs)


# --- the source tree ----------------------------------------------------------------------


def _takes_rng(node) -> bool:
    args = node.args
    return "rng" in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}


def strip_case_makers(source: str, where: str) -> str:
    """`source` with the body of every function that takes `rng` replaced by a `raise`."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and _takes_rng(node):
            raise BuildError(f"{where}:{node.lineno}: a case-making lambda; write it as a def")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _takes_rng(node):
            first = node.body[0]
            start = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
            if start == node.lineno:
                raise BuildError(f"{where}:{node.lineno}: a one-line case maker; give it a body")
            while start - 1 > node.lineno and lines[start - 2].strip()[:1] in ("#", ""):
                start -= 1  # the comments that open the body go with it
            spans.append((start, node.body[-1].end_lineno, first.col_offset))
    outermost: list[tuple[int, int, int]] = []
    for span in sorted(spans):
        if not outermost or span[0] > outermost[-1][1]:
            outermost.append(span)
    for start, end, column in reversed(outermost):
        lines[start - 1 : end] = [f"{' ' * column}raise RuntimeError({STRIPPED!r})\n"]
    return "".join(lines)


def _stub(fn, module: str) -> str:
    """A stub of reference function or class `fn`: its name and parameters, no implementation."""
    what = f"normlab.{library_name(fn)}"
    if inspect.isclass(fn):
        return (
            f"class {fn.__name__}:\n"
            f'    """{what} is not in the student download: it carries no implementation."""\n\n'
            f"    def __init__(self, *args, **kwargs):\n"
            f"        raise recording.NotRecorded({what + ' is not in this student download'!r})\n"
        )
    signature = inspect.signature(fn)
    params = []
    for p in signature.parameters.values():
        if p.default is not p.empty and eval(repr(p.default)) != p.default:  # noqa: S307
            raise BuildError(f"{what}: the default {p.default!r} does not read back")
        params.append(p.replace(annotation=p.empty))
    plain = signature.replace(parameters=params, return_annotation=signature.empty)
    passed = [
        f"*{p.name}"
        if p.kind is p.VAR_POSITIONAL
        else f"**{p.name}"
        if p.kind is p.VAR_KEYWORD
        else f"{p.name}={p.name}"
        if p.kind is p.KEYWORD_ONLY
        else p.name
        for p in params
    ]
    return (
        f"def {fn.__name__}{plain}:\n"
        f'    """{what}, as the student download has it: no implementation.\n\n'
        f"    It returns what the reference returned, when the download was built, for the\n"
        f"    inputs of the course's visible checks; any other call raises NotRecorded.\n"
        f'    """\n'
        f"    return recording.call({', '.join([repr(library_name(fn)), *passed])})\n"
    )


STUB_HEADER = '''"""normlab.{module} in the student download: stubs, no implementation (issue 19).

The course's reference stays with the graders. Each function here has the reference's name and
parameters and returns what the reference returned for the visible checks' inputs, recorded
when the download was built (normlab/grading/recording.py); any other input raises NotRecorded.
"""

from __future__ import annotations

from .grading import recording

'''

INIT_DOC = '''"""normlab, as a student downloads it: the course's checks, and no answer.

`from normlab.grading import check, summary, use_assignment` runs every visible check of the
problem sets, on inputs and expectations recorded from the course's reference when this
download was built. The reference itself (layer_norm, row_stats, ...) stays with the graders:
its names here are stubs that answer only the recorded inputs. See the course's site,
Exercises > Getting started.
"""
'''


def init_source() -> str:
    """The download's normlab/__init__.py: the full one's imports, __all__ and __version__."""
    source = (LIB / "normlab" / "__init__.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    kept = [
        ast.get_source_segment(source, node)
        for node in tree.body
        if (isinstance(node, ast.ImportFrom) and node.level == 1)
        or (isinstance(node, ast.Assign) and node.targets[0].id in ("__all__", "__version__"))
    ]
    imports = [k for k in kept if k.startswith("from")]
    return INIT_DOC + "\n" + "\n".join(imports) + "\n\n" + "\n".join(kept[len(imports) :]) + "\n"


def pyproject() -> str:
    """The download's pyproject.toml: the installed normlab's name, version, Python and core
    requirements (NumPy), from its metadata."""
    meta = importlib.metadata.metadata("normlab")
    core = [r for r in meta.get_all("Requires-Dist") or () if "extra ==" not in r]
    deps = ", ".join(f'"{d}"' for d in core)
    return f"""[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{meta["Name"]}"
version = "{meta["Version"]}"
description = "The LayerNorm course's checks for students: recorded visible batteries, no answers."
readme = "README.md"
requires-python = "{meta["Requires-Python"]}"
license = "{meta["License-Expression"]}"
dependencies = [{deps}]

[tool.setuptools.packages.find]
where = ["lib"]

[tool.setuptools.package-data]
"normlab.grading" = ["recorded.json"]
"""


README = """# normlab for students

The LayerNorm course's checks, as the problem sets' notebooks call them:
`from normlab.grading import check, summary, use_assignment`. Every visible check runs on
inputs and expectations recorded from the course's reference when this package was built; the
reference and the hidden checks stay with the graders. Needs only NumPy.
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_source(out: Path) -> Path:
    """Write the download's source tree into `out` (emptied first); returns `out`."""
    out = out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    lib = out / "lib"
    for name in SANDBOX:
        shutil.copy2(LIB / "normlab_sandbox" / f"{name}.py", _mkdir(lib / "normlab_sandbox"))
    grading = LIB / "normlab" / "grading"
    for path in sorted(grading.rglob("*.py")):
        relative = path.relative_to(grading)
        if "__pycache__" in relative.parts or str(relative.with_suffix("")) in GRADERS_ONLY:
            continue
        source = strip_case_makers(path.read_text(encoding="utf-8"), str(path))
        _write(lib / "normlab" / "grading" / relative, source)
    _write(lib / "normlab" / "__init__.py", init_source())
    for module, objects in stub_functions().items():
        stubs = "\n\n".join(_stub(fn, module) for fn in objects)
        _write(lib / "normlab" / f"{module}.py", STUB_HEADER.format(module=module) + "\n" + stubs)
    (lib / "normlab" / "grading" / recording.DATA.name).write_bytes(record().dumps())
    _write(out / "pyproject.toml", pyproject())
    _write(out / "README.md", README)
    self_check(lib)
    return out


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


SELF_CHECK = """
import sys
sys.path.insert(0, {lib!r})
import normlab
from functools import partial
from normlab.grading import CHECKS, recording, run_case, run_check
assert normlab.__file__.startswith({lib!r}), normlab.__file__
assert recording.RECORDING is not None
for assignment, specs in CHECKS.items():
    for grade_id, spec in specs.items():
        verdict = run_check(spec, partial(run_case, {{}}))
        assert verdict.category == "not written", (assignment, grade_id, verdict)
"""


def self_check(lib: Path) -> None:
    """Import the tree in a fresh interpreter and run every visible check on nothing."""
    done = subprocess.run(
        [sys.executable, "-I", "-B", "-c", SELF_CHECK.format(lib=str(lib))],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise BuildError(f"the student package does not run its checks:\n{done.stderr}")


# --- the bundle ---------------------------------------------------------------------------

BUNDLE_README = """\
The LayerNorm course: everything a student needs to do the problem sets.

  {wheel}
      normlab, the course's checks: the notebooks' test cells call them. Needs only numpy.
      It holds no answer: the visible checks run on recorded inputs and expectations.
  {notebooks}
      the problem sets, as released.

On your computer (Python 3.10 or newer), in this folder:

  python3 -m venv normlab-env
  normlab-env/bin/python -m pip install normlab-*.whl jupyterlab
  normlab-env/bin/jupyter lab

(on Windows: normlab-env\\\\Scripts\\\\ instead of normlab-env/bin/, and the wheel's full name).
On a JupyterHub or in Colab, upload this folder (or the wheel and a notebook) and run a cell
with `%pip install normlab-*.whl` (with the path to the wheel), then restart the kernel.
The course site's page Exercises > Getting started says more.
"""


def released(assignment: str) -> Path:
    return REPO / "exercises" / assignment / f"{assignment}.ipynb"


def write_bundle(downloads: Path) -> Path:
    """downloads/BUNDLE.zip: BUNDLE/ holding the one wheel there, the released notebooks and a
    README.txt, with fixed timestamps (the same inputs give the same bytes)."""
    wheels = sorted(downloads.glob("normlab-*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"expected one normlab wheel in {downloads}, found {wheels}")
    notebooks = [released(a) for a in ASSIGNMENTS]
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        raise BuildError(f"released notebooks missing (run `make release`): {missing}")
    readme = BUNDLE_README.format(
        wheel=wheels[0].name, notebooks=", ".join(p.name for p in notebooks)
    )
    members = [("README.txt", readme.encode()), (wheels[0].name, wheels[0].read_bytes())]
    members += [(p.name, p.read_bytes()) for p in notebooks]
    path = downloads / f"{BUNDLE}.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for name, data in members:
            info = zipfile.ZipInfo(f"{BUNDLE}/{name}", date_time=EPOCH_ZIP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            bundle.writestr(info, data)
    return path
