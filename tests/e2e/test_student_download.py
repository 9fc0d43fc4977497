"""From the built site alone, a student does every problem set: the download, a venv, the checks.

The site's `downloads/` holds the normlab wheel and `normlab-course-student.zip` (the wheel, the
released notebooks, a README), built by `make student` into _build/student/downloads and
published by the book (html_extra_path; tests/book/test_student_wheel.py tests that folder).
These tests copy `_build/html` to a temporary folder and work from that copy, as a student
with only the website would (tests/student_route.py says how: no repository on the path, fresh
venvs, their own kernels):

- the bundle holds what the Getting started page promises, and the wheel's core needs are light;
- nothing from solutions/ or the hidden tests is in the wheel or the bundle;
- on a laptop: the page's shell commands, run as shown, give a venv without the heavy stack in
  which ps2 filled with the instructor's solution passes every visible check;
- on a JupyterHub or in Colab (a venv with only ipykernel): the page's `%pip install` cell
  installs the wheel; each problem set filled with the solution runs without an error, and a
  blank one says that its functions are not written yet.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from notebook_secrets import secret_lines_of
from student_route import (
    BUNDLE,
    HEAVY,
    NOT_WRITTEN,
    REPO,
    bundle_members,
    clean_env,
    code_blocks,
    errors,
    execute,
    installed,
    is_check,
    python3_shim,
    run,
    self_check_report,
    solution_filled,
    stdout,
    wheel_members,
)

from normlab.grading import ASSIGNMENTS, REAL_TORCH

pytestmark = pytest.mark.slow
# The laptop's and the hub's venvs are filled by pip from the package index (`network`); the
# tests of each venv are one pytest-xdist group, so one worker makes it (a module fixture).

GETTING_STARTED = "exercises/getting_started.html"
LIGHT_CORE = {"numpy", "matplotlib"}  # what a student's notebook may need (issue 11)
ZIP = f"{BUNDLE}.zip"


@pytest.fixture(scope="module")
def site(built_site, tmp_path_factory) -> Path:
    """A copy of the built site: what a student can reach, and nothing else."""
    copy = tmp_path_factory.mktemp("student") / "site"
    shutil.copytree(built_site, copy)
    return copy


@pytest.fixture(scope="module")
def bundle(site) -> dict[str, bytes]:
    return bundle_members(site / "downloads" / ZIP)


def _wheel_name(bundle) -> str:
    wheels = [name for name in bundle if name.endswith(".whl")]
    assert len(wheels) == 1, f"the bundle should hold one wheel, not {wheels}"
    return wheels[0]


def test_the_bundle_holds_the_wheel_the_released_notebooks_and_a_readme(site, bundle):
    wheel = _wheel_name(bundle)
    notebooks = {f"{a}.ipynb" for a in ASSIGNMENTS}
    assert set(bundle) == {"README.txt", wheel} | notebooks
    for assignment in ASSIGNMENTS:
        released = REPO / "exercises" / assignment / f"{assignment}.ipynb"
        assert bundle[f"{assignment}.ipynb"] == released.read_bytes(), assignment
    assert (site / "downloads" / wheel).read_bytes() == bundle[wheel], "two different wheels"
    assert wheel.startswith("normlab-") and wheel.endswith("-py3-none-any.whl")


def test_the_site_publishes_what_make_student_built(site):
    built = REPO / "_build" / "student" / "downloads"
    assert {p.name: p.read_bytes() for p in (site / "downloads").iterdir()} == {
        p.name: p.read_bytes() for p in built.iterdir()
    }


def test_the_getting_started_page_links_the_bundle(site):
    page = (site / GETTING_STARTED).read_text(encoding="utf-8")
    assert f'href="../downloads/{ZIP}"' in page


def test_the_wheel_needs_only_a_light_core(bundle):
    files = wheel_members(bundle[_wheel_name(bundle)])
    # both packages of lib/: the checks run the student's code through normlab_sandbox
    assert {name.split("/")[0] for name in files} >= {"normlab", "normlab_sandbox"}
    metadata = next(data for name, data in files.items() if name.endswith(".dist-info/METADATA"))
    requires = [
        line.removeprefix("Requires-Dist:").strip()
        for line in metadata.decode().splitlines()
        if line.startswith("Requires-Dist:")
    ]
    core = {
        req.split(";")[0].split("[")[0].split("<")[0].split(">")[0].strip().lower()
        for req in requires
        if "extra ==" not in req
    }
    assert "numpy" in core
    assert core <= LIGHT_CORE, f"the student's install would pull {core - LIGHT_CORE}"
    assert not core & HEAVY


def _public_text() -> str:
    """What the site shows anyway: the released notebooks, the chapters and the reference
    library outside the grader (chapters show it; a reference in the wheel is allowed)."""
    lib = REPO / "lib" / "normlab"
    reference = [
        p for p in lib.rglob("*.py") if p.relative_to(lib).parts[0] not in ("course", "grading")
    ]
    sources = [
        *(REPO / "exercises").rglob("*.ipynb"),
        *(REPO / "chapters").glob("*.md"),
        *reference,
    ]
    return "\n".join(p.read_text(encoding="utf-8") for p in sources)


def secret_lines() -> set[str]:
    """Distinctive lines (40 characters or more) of every solution and hidden-tests region
    of solutions/, but those the site shows anyway."""
    public = _public_text()
    lines = set()
    for assignment in ASSIGNMENTS:
        source = REPO / "solutions" / assignment / f"{assignment}.ipynb"
        lines |= {line for line in secret_lines_of(source, 40) if line not in public}
    return lines


def test_no_solution_and_no_hidden_test_in_the_wheel_or_the_bundle(site, bundle):
    secrets = secret_lines()
    assert len(secrets) > 100  # the scan has teeth: many distinctive solution lines
    files = {f"{ZIP}:{name}": data for name, data in bundle.items()}
    for wheel in (site / "downloads").glob("*.whl"):
        files |= {f"{wheel.name}:{name}": data for name, data in wheel_members(wheel).items()}
    inner = _wheel_name(bundle)
    files |= {f"{ZIP}:{inner}:{name}": data for name, data in wheel_members(bundle[inner]).items()}
    notebooks = {name for name in files if name.endswith(".ipynb")}
    assert notebooks == {f"{ZIP}:{a}.ipynb" for a in ASSIGNMENTS}, "a notebook not released"
    assert not [name for name in files if "solutions" in name.split(":")[-1].split("/")]
    leaks = {}
    for name, data in files.items():
        text = data.decode("utf-8", errors="replace")
        found = sorted(line for line in secrets if line in text)
        if found:
            leaks[name] = found
    assert not leaks, f"solution or hidden-test lines in the student download: {leaks}"


@pytest.fixture(scope="module")
def laptop(site, tmp_path_factory) -> Path:
    """The page's shell commands, run as shown in a folder holding the download; returns
    the venv's python. Its size and the commands' time go to test-artifacts/."""
    home = tmp_path_factory.mktemp("laptop")
    shutil.copy(site / "downloads" / ZIP, home)
    (commands,) = code_blocks(site / GETTING_STARTED, "bash")
    # `jupyter lab` starts a server and waits: the test asks it its version instead
    script = commands.strip().replace("/bin/jupyter lab", "/bin/jupyter lab --version")
    assert script.endswith("--version"), "the last command shown should start JupyterLab"
    shim = python3_shim(home / "shim")
    started = time.monotonic()
    run(script, home, clean_env(shim))
    seconds = time.monotonic() - started
    venv = home / BUNDLE / "normlab-env"
    size = subprocess.run(["du", "-sb", str(venv)], capture_output=True, text=True, check=True)
    record = {
        "commands": script,
        "seconds": round(seconds, 1),
        "bytes": int(size.stdout.split()[0]),
    }
    (REPO / "test-artifacts").mkdir(exist_ok=True)
    (REPO / "test-artifacts" / "student-install.json").write_text(json.dumps(record, indent=1))
    return venv / "bin" / "python"


@pytest.mark.network
@pytest.mark.xdist_group("student-laptop")
def test_the_laptop_venv_has_normlab_and_jupyterlab_without_the_heavy_stack(laptop):
    names = installed(laptop)
    assert {"normlab", "numpy", "jupyterlab", "ipykernel"} <= names
    assert not names & HEAVY, f"installed although no student needs it: {names & HEAVY}"
    where = run(
        [str(laptop), "-c", "import normlab; print(normlab.__file__)"], laptop.parent, clean_env()
    )
    assert Path(where.strip()).is_relative_to(laptop.parents[1]), f"normlab from {where}"


@pytest.mark.network
@pytest.mark.xdist_group("student-laptop")
def test_ps2_filled_with_the_solution_passes_on_the_laptop(laptop, tmp_path):
    folder = laptop.parents[2]
    released = nbformat.read(folder / "ps2_layer_norm.ipynb", as_version=4)
    nb = execute(solution_filled(released, "ps2_layer_norm"), laptop, folder, tmp_path / "kernels")
    assert errors(nb) == []
    silent, summary = self_check_report(nb)
    assert silent == [], f"passing checks that printed no tick line: {silent}"
    assert re.match(r"(\d+) of \1 visible checks pass", summary), summary


@pytest.fixture(scope="module")
def hub(site, tmp_path_factory) -> Path:
    """A venv with only ipykernel (a JupyterHub's or Colab's Python without normlab), in a
    folder holding the download; the page's notebook cell, run in its kernel, installs normlab.
    Returns that venv's python; the bundle is unpacked in its folder."""
    home = tmp_path_factory.mktemp("hub")
    shutil.copy(site / "downloads" / ZIP, home)
    venv = home / "hub-env"
    run([sys.executable, "-m", "venv", str(venv)], home, clean_env())
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--quiet", "ipykernel"], home, clean_env())
    (cell,) = code_blocks(site / GETTING_STARTED, "ipython")
    nb = execute(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)]),
        python,
        home,
        home / "kernels",
    )
    assert errors(nb) == [], nb.cells[0].outputs
    return python


@pytest.mark.network
@pytest.mark.xdist_group("student-hub")
def test_the_notebook_cell_installs_normlab_and_nothing_heavy(hub):
    names = installed(hub)
    assert {"normlab", "numpy"} <= names, "the page's %pip install cell installed no normlab"
    assert not names & HEAVY, f"installed although no student needs it: {names & HEAVY}"


# the hub has no torch, as the download needs none: every problem set but those about torch
# (ps8, which Getting started says how to add torch for) runs there
WITHOUT_TORCH = [a for a in ASSIGNMENTS if a not in REAL_TORCH]
# the hub's user (JUPYTERHUB_USER): whose ps1 numbers the notebook works (the grading tests'
# student, course_helpers.TEST_STUDENT)
HUB_USER = "grace"


@pytest.mark.network
@pytest.mark.xdist_group("student-hub")
@pytest.mark.parametrize("assignment", WITHOUT_TORCH)
def test_each_problem_set_filled_with_the_solution_runs_clean_in_the_hub(hub, assignment, tmp_path):
    folder = hub.parents[2] / BUNDLE
    released = nbformat.read(folder / f"{assignment}.ipynb", as_version=4)
    kernels = tmp_path / "kernels"
    nb = execute(solution_filled(released, assignment), hub, folder, kernels, hub_user=HUB_USER)
    assert errors(nb) == []
    checks = [c for c in nb.cells if is_check(c)]
    assert checks and all(c.execution_count for c in checks), "a check did not run"
    silent, summary = self_check_report(nb)
    assert silent == [], f"passing checks that printed no tick line: {silent}"
    assert re.match(r"(\d+) of \1 visible checks pass", summary), summary


@pytest.mark.network
@pytest.mark.xdist_group("student-hub")
@pytest.mark.parametrize("assignment", WITHOUT_TORCH)
def test_a_blank_problem_set_says_what_is_not_written_yet(hub, assignment, tmp_path):
    """Each check of a blank notebook fails, saying which function or value is not written
    yet (a function returns None, a value's answer cell starts `name = ...`), under a ✗ on
    stdout: nothing raises, so Run All reaches the summary."""
    folder = hub.parents[2] / BUNDLE
    released = nbformat.read(folder / f"{assignment}.ipynb", as_version=4)
    nb = execute(released, hub, folder, tmp_path / "kernels", hub_user=HUB_USER)
    assert errors(nb) == []
    unfriendly = []
    for cell in nb.cells:
        if not is_check(cell):
            continue
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        shown = stdout(cell)
        if not (shown.startswith(f"✗ {grade_id}:") and NOT_WRITTEN.search(shown)):
            unfriendly.append(f"{grade_id}: {shown[:200]}")
    assert not unfriendly, unfriendly
    assert self_check_report(nb)[1].startswith("0 of "), "the summary of a blank notebook"
