"""Sphinx extension: the site hands a student everything they need to do the problem sets.

A student with only the website needs the released notebooks and `normlab`, whose checkers the
notebooks' test cells call. At the end of each HTML build this extension writes

    downloads/normlab-<version>-py3-none-any.whl   a wheel of lib/ (core need: numpy)
    downloads/normlab-course-student.zip           that wheel, the seven released notebooks
                                                   (exercises/<id>/<id>.ipynb) and a README.txt

into the site, for the *Getting started* page (exercises/getting_started.md) to link. Nothing
else goes in: the wheel is built by pip from a copy of pyproject.toml, README.md and the two
packages of lib/ (normlab and normlab_sandbox) only, and the bundle takes the notebooks that
`nbgrader generate_assignment` released, never solutions/ (tests/book/test_student_download.py
checks both).

Both files are made again only when what they are made of changes: a SHA-256 over those inputs
(and this file) is kept in the doctree folder, and a build that finds it equal, with the files in
place, skips the work. The wheel is built with `--no-build-isolation` (the book environment's
setuptools, no download at build time); `--check-build-dependencies` turns a setuptools older
than pyproject.toml's `[build-system]` asks for into a clear error. Fixed timestamps
(SOURCE_DATE_EPOCH) make the same inputs give the same bytes.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from sphinx.errors import ExtensionError

REPO = Path(__file__).resolve().parents[1]
DOWNLOADS = "downloads"
BUNDLE = "normlab-course-student"
STAMP_NAME = "normlab-student.sha256"
EPOCH = 315532800  # 1980-01-01, the earliest time a zip file can hold
# what neither the wheel nor the stamp's hash takes from lib/: build and import leftovers
LEFT_OUT = ("__pycache__", "*.pyc", "*.egg-info")

README = """\
The LayerNorm course: everything a student needs to do the seven problem sets.

  {wheel}
      normlab, the course's library: the notebooks' checks call it. Needs only numpy.
  {notebooks}
      the problem sets, as released.

On your computer (Python 3.10 or newer), in this folder:

  python3 -m venv normlab-env
  normlab-env/bin/python -m pip install normlab-*.whl jupyterlab
  normlab-env/bin/jupyter lab

(on Windows: normlab-env\\Scripts\\ instead of normlab-env/bin/, and the wheel's full name).
On a JupyterHub or in Colab, upload this folder (or the wheel and a notebook) and run a cell
with `%pip install normlab-*.whl` (with the path to the wheel), then restart the kernel.
The course site's page Exercises > Getting started says more.
"""


# what the wheel holds: the library and the leaf package its checks run through
PACKAGES = ("normlab", "normlab_sandbox")


def assignments() -> list[str]:
    """The problem sets, in the course's order (the grader's list: one source of truth)."""
    from normlab.grading import ASSIGNMENTS

    return list(ASSIGNMENTS)


def release(repo: Path, assignment: str) -> Path:
    return repo / "exercises" / assignment / f"{assignment}.ipynb"


def inputs(repo: Path) -> list[Path]:
    """Every file the wheel and the bundle are made of, and this extension (the README)."""
    library = [
        p
        for package in PACKAGES
        for p in sorted((repo / "lib" / package).rglob("*"))
        if p.is_file() and _kept(p.relative_to(repo / "lib"))
    ]
    notebooks = [release(repo, a) for a in assignments()]
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        raise ExtensionError(f"released notebooks missing (run `make release`): {missing}")
    return [repo / "pyproject.toml", repo / "README.md", *library, *notebooks, Path(__file__)]


def _kept(path: Path) -> bool:
    """False when a part of `path` (relative to lib/) matches LEFT_OUT, as in the wheel's copy."""
    return not any(fnmatch.fnmatch(part, pattern) for part in path.parts for pattern in LEFT_OUT)


def digest(paths: list[Path], repo: Path) -> str:
    """SHA-256 over the names (relative to repo) and bytes of `paths`."""
    sha = hashlib.sha256()
    for path in paths:
        name = path.relative_to(repo) if path.is_relative_to(repo) else path.name
        sha.update(str(name).encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()


def build_wheel(repo: Path, out: Path) -> Path:
    """`pip wheel` of a clean copy of the package sources; returns the wheel's path."""
    with tempfile.TemporaryDirectory(prefix="normlab-wheel-") as tmp:
        source = Path(tmp) / "src"
        (source / "lib").mkdir(parents=True)
        shutil.copy2(repo / "pyproject.toml", source)
        shutil.copy2(repo / "README.md", source)
        for package in PACKAGES:
            shutil.copytree(
                repo / "lib" / package,
                source / "lib" / package,
                ignore=shutil.ignore_patterns(*LEFT_OUT),
            )
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        command += ["--check-build-dependencies", "--quiet", "--wheel-dir", str(out), str(source)]
        env = {**os.environ, "SOURCE_DATE_EPOCH": str(EPOCH), "PIP_NO_INPUT": "1"}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise ExtensionError(
                f"building the student wheel failed:\n$ {' '.join(command)}\n"
                f"{done.stdout}{done.stderr}"
            )
    wheels = sorted(out.glob("normlab-*.whl"))
    if len(wheels) != 1:
        raise ExtensionError(f"expected one normlab wheel in {out}, found {wheels}")
    return wheels[0]


def _add(bundle: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(f"{BUNDLE}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    bundle.writestr(info, data)


def build_bundle(repo: Path, wheel: Path, out: Path) -> Path:
    """The one download: BUNDLE/ holding the wheel, the released notebooks and README.txt."""
    notebooks = [release(repo, a) for a in assignments()]
    readme = README.format(wheel=wheel.name, notebooks=", ".join(p.name for p in notebooks))
    path = out / f"{BUNDLE}.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        _add(bundle, "README.txt", readme.encode())
        _add(bundle, wheel.name, wheel.read_bytes())
        for notebook in notebooks:
            _add(bundle, notebook.name, notebook.read_bytes())
    return path


def publish(repo: Path, site: Path, stamp: Path) -> bool:
    """Write the wheel and the bundle into site/downloads unless they are up to date.

    Returns True when they were (re)built, False when the stamp showed nothing had changed.
    """
    out = site / DOWNLOADS
    wanted = digest(inputs(repo), repo)
    fresh = stamp.is_file() and stamp.read_text().strip() == wanted
    if fresh and (out / f"{BUNDLE}.zip").is_file() and list(out.glob("normlab-*.whl")):
        return False
    shutil.rmtree(out, ignore_errors=True)  # the folder is ours: no stale wheel stays behind
    out.mkdir(parents=True)
    build_bundle(repo, build_wheel(repo, out), out)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(wanted + "\n")
    return True


def _on_build_finished(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        publish(REPO, Path(app.outdir), Path(app.doctreedir) / STAMP_NAME)


def setup(app):
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
