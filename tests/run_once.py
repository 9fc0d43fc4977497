"""Expensive fixtures that every pytest-xdist worker of a run shares: made once, under a lock.

pytest-xdist gives each worker a session of its own, so a session-scoped fixture that builds
the book or grades a course would do it once per worker. `once(tmp_path_factory, name, make)`
calls `make(folder)` in the first worker that asks, under a file lock the other workers wait
on; they get what it returned (pickled beside the folder) or, when it failed, the same failure,
without trying again. The folder and the result live in the run's shared temporary folder
(the parent of every worker's own; pytest's basetemp itself when xdist is off), so the next
run starts afresh. Whatever `make` builds is shared: tests read it, and a test that changes
it works on a copy.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def shared_folder(tmp_path_factory) -> Path:
    """The temporary folder that every worker of this run sees."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(tmp_path_factory, name: str, make: Callable[[Path], T]) -> T:
    """`make(folder)`'s result, computed by the first worker of the run that asks for `name`."""
    root = shared_folder(tmp_path_factory)
    folder, result, failure = root / name, root / f"{name}.pickle", root / f"{name}.failed"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if result.is_file():
            return pickle.loads(result.read_bytes())
        if failure.is_file():
            pytest.fail(f"{name} failed in another worker:\n{failure.read_text()}", pytrace=False)
        folder.mkdir()
        try:
            made = make(folder)
        except BaseException:  # pytest.fail raises a BaseException: it must be shared too
            failure.write_text(traceback.format_exc()[-8000:])
            raise
        result.write_bytes(pickle.dumps(made))
        return made
