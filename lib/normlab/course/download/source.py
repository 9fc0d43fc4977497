"""The student download's source tree: normlab's checks on recorded visible batteries, no answer;
and its bundle: the wheel built from it, the released notebooks and a README, one zip.

    python -m normlab.course student-source _build/student-src
    python -m normlab.course student-bundle _build/student/downloads

What ships is an include list copied as it is (`SHIPS`), the recording, the pools, and stubs of
the reference's modules that raise `NotInDownload`: ARCHITECTURE.md, "The student download".
The stubs keep the reference's names and parameters, so `import normlab` works as the notebooks
use it and a student's function that calls one is reported by the tripwire as at grading.
"""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from normlab.grading import ASSIGNMENTS, pools, recorded

from .recording import REPO, library_name, record, stub_functions

LIB = REPO / "lib"
SANDBOX = (
    "__init__",
    "cases",
    "guarded",
    "module_probes",
    "spirals",
    "student_variant",
    "tripwire",
    "wire",
)
# what ships, under lib/: whole folders (their .py files), and the sandbox's modules
SHIPS = ("normlab/grading", *(f"normlab_sandbox/{name}.py" for name in SANDBOX))


class BuildError(Exception):
    """The download cannot be built as the course promises (the message says why)."""


def _stub(fn, module: str) -> str:
    """A stub of reference function or class `fn`: its name and parameters, no implementation."""
    what = f"normlab.{library_name(fn)}"
    if inspect.isclass(fn):
        return (
            f"class {fn.__name__}:\n"
            f'    """{what} is not in the student download: it carries no implementation."""\n\n'
            f"    def __init__(self, *args, **kwargs):\n"
            f"        raise recorded.NotInDownload({_not_here(what)!r})\n"
        )
    signature = inspect.signature(fn)
    params = []
    for p in signature.parameters.values():
        if p.default is not p.empty and eval(repr(p.default)) != p.default:  # noqa: S307
            raise BuildError(f"{what}: the default {p.default!r} does not read back")
        params.append(p.replace(annotation=p.empty))
    plain = signature.replace(parameters=params, return_annotation=signature.empty)
    return (
        f"def {fn.__name__}{plain}:\n"
        f'    """{what}, as the student download has it: no implementation."""\n'
        f"    raise recorded.NotInDownload({_not_here(what)!r})\n"
    )


def _not_here(what: str) -> str:
    return (
        f"{what} is not part of the student download: it holds no implementation of what the "
        f"problem sets ask you to write (the course's site shows the reference once a problem "
        f"set is done)"
    )


STUB_HEADER = '''"""normlab.{module} in the student download: stubs, no implementation (issue 19).

The course's reference stays with the graders. Each function here has the reference's name and
parameters, and raises NotInDownload.
"""

from __future__ import annotations

from .grading import recorded

'''

INIT_DOC = '''"""normlab, as a student downloads it: the course's checks, and no answer.

`from normlab.grading import check, summary, use_assignment` runs every visible check of the
problem sets, on inputs and expectations recorded from the course's reference when this
download was built. The reference itself (layer_norm, row_stats, ...) stays with the graders:
its names here are stubs that raise NotInDownload. See the course's site, Exercises > Getting
started.
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
    """The download's pyproject.toml, from the installed normlab's metadata (core requirements)."""
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
"normlab.grading" = ["*.json"]
"""


README = """# normlab for students

The LayerNorm course's checks, as the problem sets' notebooks call them:
`from normlab.grading import check, summary, use_assignment` (and ps1's `my_variant`: your
own record and width, by your student id). Every visible check runs on
inputs and expectations recorded from the course's reference when this package was built; the
reference and the hidden checks stay with the graders. Needs only NumPy; ps8_in_a_model also
needs torch (its checks run your module with it).
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_source(out: Path) -> Path:
    """Write the download's source tree into `out` (emptied first); returns `out`."""
    out = out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    lib = out / "lib"
    for shipped in map(LIB.joinpath, SHIPS):  # a .py file, or a folder: its .py files
        found = [shipped] if shipped.is_file() else shipped.rglob("*.py")
        for path in sorted(p for p in found if "__pycache__" not in p.parts):
            relative = path.relative_to(LIB)
            (lib / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, lib / relative)
    _write(lib / "normlab" / "__init__.py", init_source())
    for module, objects in stub_functions().items():
        stubs = "\n\n".join(_stub(fn, module) for fn in objects)
        _write(lib / "normlab" / f"{module}.py", STUB_HEADER.format(module=module) + "\n" + stubs)
    (lib / "normlab" / "grading" / recorded.DATA.name).write_bytes(record().dumps())
    for pool in pools.POOLS.values():
        shutil.copy2(LIB / "normlab" / "grading" / pool, lib / "normlab" / "grading" / pool)
    _write(out / "pyproject.toml", pyproject())
    _write(out / "README.md", README)
    self_check(lib)
    return out


SELF_CHECK = """
import sys
sys.path.insert(0, {lib!r})
import normlab
from functools import partial
from normlab.grading import CHECKS, backing, recorded, run_case, run_check
assert normlab.__file__.startswith({lib!r}), normlab.__file__
assert isinstance(backing.current(), recorded.RecordedBacking)
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


BUNDLE = "normlab-course-student"
EPOCH_ZIP = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip file holds: the same bytes each time

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

(on Windows: normlab-env\\Scripts\\ instead of normlab-env/bin/, and the wheel's full name).
ps8_in_a_model also needs torch; the CPU build is enough:

  normlab-env/bin/python -m pip install torch --index-url https://download.pytorch.org/whl/cpu

On a JupyterHub or in Colab, upload this folder (or the wheel and a notebook) and run a cell
with `%pip install normlab-*.whl` (with the path to the wheel), then restart the kernel.
The course site's page Exercises > Getting started says more.
"""


def write_bundle(downloads: Path) -> Path:
    """downloads/BUNDLE.zip: the one wheel there, the released notebooks and a README.txt, with
    fixed timestamps (the same inputs give the same bytes)."""
    wheels = sorted(downloads.glob("normlab-*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"expected one normlab wheel in {downloads}, found {wheels}")
    notebooks = [REPO / "exercises" / a / f"{a}.ipynb" for a in ASSIGNMENTS]
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
            info.external_attr = 0o644 << 16
            bundle.writestr(info, data, zipfile.ZIP_DEFLATED)
    return path
