"""No released notebook's own code answers a problem set (issue 44, item 13).

Every problem set is on the site at once, so a helper a notebook writes out for its student (a
finite-difference check's forward pass, say) must not be the answer another set asks for: ps5's
once was a working LayerNorm (ps2's answer), ps7's a batch-norm (ps3's). Here each released
notebook's code runs as a student would find it (its answer cells still stubs), and every
function its own cells define is called on a record batch: none may return what a reference
function of normlab returns there, with the notebook's own gain and bias or without.
"""

from __future__ import annotations

import contextlib
import inspect
import io
from pathlib import Path

import nbformat
import numpy as np
import pytest

import normlab
from normlab.grading import ASSIGNMENTS

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"
X = np.random.default_rng(7).normal(size=(4, 3)) * 3.0 + 1.0


def _answers(x, gamma) -> list[np.ndarray]:
    """What the reference's normalizations return on x, with `gamma` and beta = 0 or none."""
    found = []
    for g in (None, gamma):
        found += [normlab.layer_norm(x, g), normlab.batch_norm(x, g), normlab.rms_norm(x, g)]
    return found


def _helpers(assignment: str) -> dict:
    """The functions the released notebook's own code cells define, and its namespace."""
    nb = nbformat.read(EXERCISES / assignment / f"{assignment}.ipynb", as_version=4)
    namespace: dict = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or meta.get("solution") or meta.get("grade"):
            continue
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(Exception):
            exec(compile(cell.source, f"<{assignment}>", "exec"), namespace)  # noqa: S102
    own = {
        name: value
        for name, value in namespace.items()
        if inspect.isfunction(value) and value.__code__.co_filename == f"<{assignment}>"
    }
    return own, namespace


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_helper_of_a_released_notebook_computes_a_reference_answer(assignment):
    own, namespace = _helpers(assignment)
    x = namespace.get("x")  # the records the notebook's own helpers are written for
    x = x if isinstance(x, np.ndarray) and x.ndim == 2 and x.dtype.kind == "f" else X
    gamma = np.asarray(namespace.get("gamma", np.ones(x.shape[-1])), dtype=float)
    gamma = gamma if gamma.shape == (x.shape[-1],) else np.ones(x.shape[-1])
    for name, function in own.items():
        if len(inspect.signature(function).parameters) != 1:
            continue
        try:
            y = np.asarray(function(x), dtype=float)
        except Exception:  # noqa: BLE001 (a helper that needs the student's answers first)
            continue
        answered = [a for a in _answers(x, gamma) if a.shape == y.shape and np.allclose(y, a)]
        assert not answered, f"{assignment}'s {name} computes a normalization a set asks for"


def test_the_check_sees_a_helper_that_answers():
    """The check has teeth: ps5's old forward pass, a LayerNorm with the cell's gamma."""
    gamma = np.array([0.5, 1.5, 2.0])

    def forward(x):
        mu = x.mean(axis=-1, keepdims=True)
        return gamma * (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)

    assert any(np.allclose(forward(X), a) for a in _answers(X, gamma))
