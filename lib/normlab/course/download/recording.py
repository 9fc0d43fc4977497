"""What the student download records: every check's visible battery and what its judge asks.

`record()` runs in the full normlab (`make student`, `download.source`), over whatever `CHECKS`
holds, and returns the `normlab.grading.recording.Recording` the download replays:

- for every check, its visible battery, `spec.make_cases(DEFAULT_SEED, hidden=False)`;
- the course's solution (`solutions/<ps>/<ps>.ipynb`, all but its test cells) run on it, each
  trusted LayerNorm a check hands over (`Ref`) wrapped so that every call the solution makes
  (ps3's witness) is recorded; then every such LayerNorm on every input any of them was given,
  so a witness that probes as the course's does, in another order or fewer, is answered;
- the judge judging the solution's results, then, case by case, a wrong result in place of
  one (`wrong_results`), through `Recorder`, an oracle that records every question it is asked
  with the live answer (a judge asks more on the way to some messages than to a pass), and
  for a question about ps8's gradients the same question about every member of the family
  (which member a judge asks about depends on the student's output);
- for a case whose target is a public normlab function, that function on the case's own
  arguments (a student's function that calls it gets the reference's numbers, as at grading).

`tests/grading/test_recording.py` replays the verdict bank on it against the live checks.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import sys
from dataclasses import replace
from pathlib import Path

import nbformat
import numpy as np

import normlab
from normlab.grading import ASSIGNMENTS, CHECKS, DEFAULT_SEED, recording, reference, trusted
from normlab.grading.oracle import LIVE
from normlab.grading.ps8_gradients import DETACHED
from normlab.grading.ps8_probes import member_options
from normlab_sandbox import guarded
from normlab_sandbox.cases import Ref, Result

REPO = Path(normlab.__file__).resolve().parents[2]
SUMMARY_CELL = "summary"  # the grade_id of each notebook's last cell, summary(globals())


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

    # the oracle's questions, as recording.RecordedOracle asks them
    def reference(self, name, *args, **kwargs):
        q = ("reference", name, args, kwargs)
        return self.ask(q, lambda: LIVE.reference(name, *args, **kwargs))

    def family(self, x, eps):
        return self.ask(("family", x, eps), lambda: LIVE.family(x, eps))

    def statistics(self, x):
        return self.ask(("statistics", x), lambda: LIVE.statistics(x))

    def wrong(self, name, *args, **kwargs):
        return self.ask(("wrong", name, args, kwargs), lambda: LIVE.wrong(name, *args, **kwargs))

    def torch_layer_norm(self, x, normalized_shape, weight=None, bias=None, **options):
        if options.get("dy") is not None:
            self._every_members_gradients(x, normalized_shape, weight, bias, options)
        return self._torch_layer_norm(x, normalized_shape, weight, bias, options)

    def _torch_layer_norm(self, x, shape, weight, bias, options: dict):
        question = ("torch_layer_norm", x, shape, weight, bias, options)
        return self.ask(question, lambda: LIVE.torch_layer_norm(x, shape, weight, bias, **options))

    def _every_members_gradients(self, x, shape, weight, bias, options: dict) -> None:
        """ps8's gradient cells ask for the gradients of the member of the family that the
        student's output matches, and with its statistics detached (`ps8_gradients`): which
        member depends on the student's code, so every member's are recorded, each way."""
        eps, dy = options["eps"], options["dy"]
        for member in LIVE.family(np.asarray(x, dtype=np.float64), eps):
            for detach in ((), *DETACHED):
                chosen = {"eps": eps, "dy": dy, **member_options(member)}
                chosen |= {"detach": detach} if detach else {}
                with contextlib.suppress(Exception):  # recorded: the replay raises it too
                    self._torch_layer_norm(x, shape, weight, bias, chosen)

    def torch_layer_norm_state(self, normalized_shape, elementwise_affine=True):
        question = ("torch_layer_norm_state", normalized_shape, elementwise_affine)
        return self.ask(
            question, lambda: LIVE.torch_layer_norm_state(normalized_shape, elementwise_affine)
        )

    def training_losses(self, run: dict, **member):
        question = ("training_losses", run, member)
        return self.ask(question, lambda: LIVE.training_losses(run, **member))

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
    if type(value) is dict:  # a probe's findings (ps8)
        return {k: _mapped(v, f) for k, v in value.items()}
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
