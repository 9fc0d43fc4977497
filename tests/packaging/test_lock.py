"""The lock, `constraints.txt`, resolves on every Python the README promises (issue 13).

`constraints.txt` is a universal lock made by `make lock` (uv pip compile --universal): one pin
per package, with environment markers where Pythons need different releases (NumPy 2.2 on 3.10,
soupsieve 2.x below 3.11.5, Debian 12's 3.11.2). For each supported version this asks uv to
resolve the whole course (`.[dev]`, every extra) under the lock, from PyPI's metadata only, and
checks that every package it picks is pinned by the lock: a new dependency that `make lock` has
not seen fails here, not on a newcomer's machine.

A resolution waits on the index far more than it computes (about 10 s, 1 s of it CPU here), so
the module starts all of them at once (`resolutions`, one worker's group) and each target's
test reads its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

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


def _resolve(target: tuple[str, str]) -> subprocess.CompletedProcess:
    """uv's resolution of `.[dev]` under the lock for one (python, platform)."""
    python, platform = target
    return subprocess.run(
        [str(UV), "pip", "compile", "pyproject.toml", "--extra", "dev", "--constraint",
         str(LOCK), "--python-version", python, "--python-platform", platform,
         "--no-header", "--no-annotate", "--quiet"],
        cwd=REPO, env={**os.environ, "MACOSX_DEPLOYMENT_TARGET": "14.0"},  # torch's macOS wheels
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def resolutions() -> dict[tuple[str, str], subprocess.CompletedProcess]:
    """Every target's resolution, all started at once."""
    with ThreadPoolExecutor(max_workers=len(TARGETS)) as pool:
        return dict(zip(TARGETS, pool.map(_resolve, TARGETS), strict=True))


@pytest.mark.slow
@pytest.mark.network  # uv reads PyPI's metadata
@pytest.mark.parametrize(("python", "platform"), TARGETS)
def test_lock_resolves(resolutions, python, platform):
    """uv resolves `.[dev]` under the lock for this Python; everything it picks is pinned."""
    done = resolutions[python, platform]
    assert done.returncode == 0, f"the lock does not resolve on Python {python}:\n{done.stderr}"
    unpinned = _pins(done.stdout) - _pins(LOCK.read_text())
    assert not unpinned, f"resolved but not in constraints.txt (run `make lock`): {unpinned}"
