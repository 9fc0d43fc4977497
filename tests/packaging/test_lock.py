"""The lock, `constraints.txt`, resolves on every Python the README promises (issue 13).

`constraints.txt` is a universal lock made by `make lock` (uv pip compile --universal): one pin
per package, with environment markers where Pythons need different releases (NumPy 2.2 on 3.10,
soupsieve 2.x below 3.11.5, Debian 12's 3.11.2). For each supported version this asks uv to
resolve the whole course (`.[dev]`, every extra) under the lock, from PyPI's metadata only, and
checks that every package it picks is pinned by the lock: a new dependency that `make lock` has
not seen fails here, not on a newcomer's machine.

A resolution waits on the index far more than it computes (about 10 s, 1 s of it CPU here), so
they all start at once, and early: the first worker starts them when it has collected
(`start_resolutions`, called by tests/conftest.py), so they wait while the run computes, and
each target's test reads its own result from the run's shared folder.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_once import shared_folder

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "constraints.txt"
UV = Path(sys.executable).parent / "uv"
SUPPORTED = ("3.10", "3.11", "3.12", "3.13")  # README: "Python 3.10 to 3.13"
# (python version, uv platform): the range on Linux, Debian 12's own python3, and the other OSes
TARGETS = [(v, "x86_64-manylinux_2_28") for v in SUPPORTED] + [
    ("3.11.2", "x86_64-manylinux_2_28"),
    ("3.12", "aarch64-apple-darwin"),
    ("3.12", "x86_64-pc-windows-msvc"),
]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;]+)")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(text: str) -> set[tuple[str, str]]:
    """(name, version) of every `name==version` line, markers ignored."""
    found = set()
    for line in text.splitlines():
        match = PIN.match(line.strip())
        if match:
            found.add((_canonical(match[1]), match[2]))
    return found


def test_readme_and_pyproject_name_the_tested_range():
    """The README names the range this test resolves, and pyproject requires its lower end."""
    readme = (REPO / "README.md").read_text()
    assert f"Python {SUPPORTED[0]} to {SUPPORTED[-1]}" in readme
    pyproject = (REPO / "pyproject.toml").read_text()  # no tomllib: it is 3.11+
    assert f'requires-python = ">={SUPPORTED[0]}"' in pyproject


FOLDER = "lock-resolutions"  # in the run's shared folder: <python>-<platform>.out, .err, .rc
# sh -c RUN <out> <command...>: in the background, the command's output and errors, then, last,
# its exit status (torch's macOS wheels need the deployment target); stopped after 10 minutes
RUN = (
    '(MACOSX_DEPLOYMENT_TARGET=14.0 timeout 600 "$@" >"$0.out" 2>"$0.err" </dev/null; '
    'echo $? >"$0.part"; mv "$0.part" "$0.rc") &'
)


def start_resolutions(folder: Path) -> None:
    """Start every target's `uv pip compile` of `.[dev]` under the lock in the background (it
    outlives the worker that started it), into `folder`."""
    folder.mkdir(exist_ok=True)
    for python, platform in TARGETS:
        subprocess.run(
            ["sh", "-c", RUN, str(folder / f"{python}-{platform}"),
             str(UV), "pip", "compile", "pyproject.toml", "--extra", "dev", "--constraint",
             str(LOCK), "--python-version", python, "--python-platform", platform,
             "--no-header", "--no-annotate", "--quiet"],
            cwd=REPO, check=True,
        )  # fmt: skip


@pytest.fixture(scope="module")
def resolutions(tmp_path_factory) -> Path:
    """The folder of every target's resolution, started early or, when not, now."""
    folder = shared_folder(tmp_path_factory) / FOLDER
    if not folder.is_dir():
        start_resolutions(folder)
    return folder


def _result(folder: Path, python: str, platform: str) -> tuple[int, str, str]:
    """(exit status, output, errors) of one target's resolution, once it has finished."""
    out = folder / f"{python}-{platform}"
    deadline = time.monotonic() + 600
    while not Path(f"{out}.rc").is_file():
        assert time.monotonic() < deadline, f"uv pip compile for {python} ran past 600 s"
        time.sleep(0.5)
    return (int(Path(f"{out}.rc").read_text()), Path(f"{out}.out").read_text(),
            Path(f"{out}.err").read_text())  # fmt: skip


@pytest.mark.slow
@pytest.mark.network  # uv reads PyPI's metadata
@pytest.mark.parametrize(("python", "platform"), TARGETS)
def test_lock_resolves(resolutions, python, platform):
    """uv resolves `.[dev]` under the lock for this Python; everything it picks is pinned."""
    status, output, errors = _result(resolutions, python, platform)
    assert status == 0, f"the lock does not resolve on Python {python} (exit {status}):\n{errors}"
    unpinned = _pins(output) - _pins(LOCK.read_text())
    assert not unpinned, f"resolved but not in constraints.txt (run `make lock`): {unpinned}"
