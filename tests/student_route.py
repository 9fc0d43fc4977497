"""What a student does with the site's download, done by a test: venvs, kernels, notebooks.

Everything here runs outside the repository: a fresh venv made with this interpreter, an
environment without PYTHONPATH or the course's venv, a kernel started from the fresh venv's
python (a kernelspec in a temporary folder), the notebook executed by nbclient from the course
venv. Only `solution_filled` reads the repository (solutions/): the test may, the venv may not.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
BUNDLE = "normlab-course-student"
HEAVY = {"torch", "jupyter-book", "nbgrader", "sphinx", "psycopg2", "psycopg2-binary"}
NOT_WRITTEN = re.compile(
    r"(\w+) is not written yet: (it returns None|it raises NotImplementedError|replace the \.\.\.)"
)


def clean_env(path_first: Path | None = None) -> dict[str, str]:
    """os.environ without Python, venv and Jupyter settings; PATH: path_first, then the system."""
    drop = ("PYTHON", "VIRTUAL_ENV", "JUPYTER", "IPYTHON", "CONDA")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    system = "/usr/local/bin:/usr/bin:/bin"
    env["PATH"] = f"{path_first}{os.pathsep}{system}" if path_first else system
    return env


def python3_shim(folder: Path) -> Path:
    """A folder whose `python3` (and `python`) is this interpreter, to put first on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("python3", "python"):
        (folder / name).unlink(missing_ok=True)
        (folder / name).symlink_to(sys.executable)
    return folder


def run(command: list[str] | str, cwd: Path, env: dict, timeout: int = 900) -> str:
    """Run a command (a list, or a bash script); fail with its output; return stdout."""
    argv = ["bash", "-euo", "pipefail", "-c", command] if isinstance(command, str) else command
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"{command} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def code_blocks(page: Path, language: str) -> list[str]:
    """The text of the page's highlighted code blocks in `language`, as a reader copies it."""
    text = page.read_text(encoding="utf-8")
    pattern = (
        rf'<div class="highlight-{language} notranslate"><div class="highlight"><pre>(.*?)</pre>'
    )
    return [html.unescape(re.sub(r"<[^>]+>", "", b)) for b in re.findall(pattern, text, re.S)]


def installed(python: Path) -> set[str]:
    """The distributions installed in python's environment, normalized names."""
    listing = run([str(python), "-m", "pip", "list", "--format=json"], python.parent, clean_env())
    return {re.sub(r"[-_.]+", "-", d["name"]).lower() for d in json.loads(listing)}


def bundle_members(bundle: Path) -> dict[str, bytes]:
    """name (without the BUNDLE/ folder) -> bytes of each file of the bundle."""
    with zipfile.ZipFile(bundle) as z:
        return {
            n.removeprefix(f"{BUNDLE}/"): z.read(n) for n in z.namelist() if not n.endswith("/")
        }


def wheel_members(wheel: bytes | Path) -> dict[str, bytes]:
    """name -> bytes of each file of a wheel (a path, or its bytes)."""
    source = wheel if isinstance(wheel, Path) else io.BytesIO(wheel)
    with zipfile.ZipFile(source) as z:
        return {n: z.read(n) for n in z.namelist()}


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def is_check(cell) -> bool:
    """An autograded test cell: graded, not an answer."""
    return cell.cell_type == "code" and _meta(cell).get("grade") and not _meta(cell).get("solution")


def instructor_answers(assignment: str) -> dict:
    """grade_id -> each answer cell of the instructor's notebook (solutions/)."""
    source = nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    return {_meta(c)["grade_id"]: c for c in source.cells if _meta(c).get("solution")}


def solution_filled(released, assignment: str):
    """The released notebook with each answer cell replaced by the instructor's, by grade_id."""
    answers = {grade_id: cell.source for grade_id, cell in instructor_answers(assignment).items()}
    filled = nbformat.from_dict(released)
    for cell in filled.cells:
        if _meta(cell).get("solution"):
            cell.source = answers[_meta(cell)["grade_id"]]
    return filled


def execute(nb, python: Path, cwd: Path, kernels: Path, timeout: int = 600, hub_user: str = ""):
    """Run every cell of nb in a kernel of `python` (cwd `cwd`), errors recorded, not raised;
    `hub_user`: the kernel runs on a JupyterHub as that user (JUPYTERHUB_USER: ps1's student)."""
    spec = kernels / "student"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "student", "language": "python"})
    )
    manager = AsyncKernelManager(
        kernel_name="student", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)])
    )
    client = NotebookClient(
        nb,
        km=manager,
        timeout=timeout,
        allow_errors=True,
        resources={"metadata": {"path": str(cwd)}},
    )
    # cleanup_kc: shut the kernel down and close its sockets (nbclient leaves a km it was given)
    env = clean_env(python.parent)
    if hub_user:
        env["JUPYTERHUB_USER"] = hub_user
    client.execute(cleanup_kc=True, env=env)
    return nb


def stdout(cell) -> str:
    """What a code cell printed."""
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("name") == "stdout")


def self_check_report(nb) -> tuple[list[str], str]:
    """(grade_ids of the check cells that printed no tick line, the last cell's output): a
    passing visible check prints "✓ <grade_id>: ..."; the last cell prints the summary."""
    silent = [
        _meta(cell)["grade_id"]
        for cell in nb.cells
        if is_check(cell) and f"✓ {_meta(cell)['grade_id']}:" not in stdout(cell)
    ]
    return silent, stdout([c for c in nb.cells if c.cell_type == "code"][-1])


def errors(nb) -> list[tuple[str, str, str]]:
    """(grade_id or cell index, ename, evalue) of every cell that raised."""
    found = []
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.output_type == "error":
                found.append((_meta(cell).get("grade_id", f"cell {index}"), out.ename, out.evalue))
    return found
