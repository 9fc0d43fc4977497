"""What the student download records (`record()`, in the full course): every check's visible
battery (a check that varies, one per variant, by slot), the live answer to each question the
check declares for each case (complete by construction), and, for ps3's witness, what each
trusted LayerNorm a visible case hands over returns on every input the course's own witness
(`solutions/ps3_axes/`) gives any of them, so a witness that probes as it does, in another order
or fewer, is answered whichever norm it is handed. `normlab.grading.recorded` replays it.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import re
from pathlib import Path

import nbformat
import numpy as np

import normlab
from normlab.answer_key import reference, trusted
from normlab.answer_key.live import LIVE
from normlab.grading import ASSIGNMENTS, CHECKS, DEFAULT_SEED, pools, recorded, scripted_timer
from normlab.grading.checkcell import is_check_cell
from normlab_sandbox import guarded
from normlab_sandbox.cases import Ref

REPO = Path(normlab.__file__).resolve().parents[2]
SUMMARY_CELL = "summary"  # the grade_id of each notebook's last cell, summary(globals())


def answer_cells(nb) -> list[str]:
    """The sources of a notebook's code cells but its test cells and its summary cell."""
    cells = []
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and not is_check_cell(cell) and grade_id != SUMMARY_CELL:
            cells.append(cell.source)
    return cells


STUDENT_LINE = re.compile(r"^STUDENT = .*$", re.MULTILINE)


def as_student(source: str, student: str) -> str:
    """A cell's source with its `STUDENT = ...` line (ps1's first cell) naming `student`."""
    return STUDENT_LINE.sub(f"STUDENT = {student!r}", source)


def solution_namespace(assignment: str, student: str = "") -> dict:
    """The source notebook's cells run here, quietly; as `student` (ps1's STUDENT line)."""
    path = REPO / "solutions" / assignment / f"{assignment}.ipynb"
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for source in answer_cells(nbformat.read(path, as_version=4)):
            source = as_student(source, student) if student else source
            exec(compile(source, f"<{path.name}>", "exec"), namespace)  # noqa: S102 (ours)
    return namespace


def library_name(fn) -> str:
    """A reference function's name after "normlab.": "layer_norm", or "red_team.wrong_axis"."""
    if getattr(normlab, fn.__name__, None) is fn:
        return fn.__name__
    return f"{fn.__module__.removeprefix('normlab.')}.{fn.__name__}"


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


def _answered(fn, *args) -> object:
    """fn(*args), a live answer, as the recording stores it (`Raised` when it raised)."""
    try:
        return recorded.storable(fn(*args))
    except Exception as exc:  # noqa: BLE001 (recorded: the replay raises it too)
        return recorded.Raised(type(exc).__name__, str(exc))


def _norm_refs(battery: list) -> list[str]:
    """The trusted LayerNorms a battery's cases hand over (ps6's scripted timer is no norm)."""
    values = [value for case in battery for value in (*case.args, *case.kwargs.values())]
    refs = [value.name for value in values if isinstance(value, Ref)]
    return [name for name in refs if not name.startswith(scripted_timer.PREFIX)]


def _witness_inputs(assignment: str, battery: list) -> list[np.ndarray]:
    """Every input the course's own solution gives the trusted LayerNorms of a battery."""
    solution = solution_namespace(assignment)
    seen: list[np.ndarray] = []

    def resolve(ref: Ref, made: dict):
        live = trusted.resolve(ref, made)

        def norm_fn(x):
            seen.append(np.array(x, copy=True))
            return live(x)

        return norm_fn

    with np.errstate(all="ignore"):
        for case in battery:
            guarded.run_case(solution, case, resolve)
    return seen


def record() -> recorded.Recording:
    """The recording of every check's visible battery (see the module docstring)."""
    cases: dict = {}
    answers: dict = {}
    refs: set[str] = set()
    inputs: list[np.ndarray] = []
    with np.errstate(all="ignore"):
        for assignment in ASSIGNMENTS:
            cases[assignment] = {}
            for grade_id, spec in CHECKS[assignment].items():
                variants = pools.variants(assignment) if spec.varies else [None]
                made = {  # by slot; None: the one battery of a check that does not vary
                    (v["slot"] if v else None): spec.make_cases(
                        DEFAULT_SEED, hidden=False, variant=v
                    )
                    for v in variants
                }
                cases[assignment][grade_id] = made if spec.varies else made[None]
                battery = [case for slot_cases in made.values() for case in slot_cases]
                for question in (q for case in battery for q in spec.questions(case)):
                    key = recorded.fingerprint(question)
                    if key not in answers:
                        answers[key] = _answered(LIVE.answer, question)
                norms = _norm_refs(battery)
                if norms:
                    refs.update(norms)
                    inputs += _witness_inputs(assignment, battery)
        for name in sorted(refs):
            live = trusted.resolve(Ref(name), {})
            for x in inputs:
                question = recorded.norm_question(name, x)
                answers[recorded.fingerprint(question)] = _answered(live, x)
    return recorded.Recording(cases, answers, sorted(refs), DEFAULT_SEED)
