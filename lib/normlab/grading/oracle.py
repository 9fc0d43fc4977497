"""The oracle: the one seam through which judges reach what a correct answer would be (what
each method answers: `_Asking`).

A check declares the questions its judge may ask about each case (`CheckSpec.questions`,
written with `ASK`), and the judge gets a `DeclaredOracle`, which refuses any other. So a
battery's answers are known from its cases alone: the student download records exactly them
(ARCHITECTURE.md, "The student download"); the answer key answers them live. This module
computes nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Question:
    """One question to the oracle: its method and arguments, as the judge asks it."""

    method: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


class UndeclaredQuestion(LookupError):
    """A judge asked a question its check did not declare for the case (a course bug)."""


class _Asking:
    """The oracle's methods; each makes its `Question` and hands it to `_put`, which returns it
    here (`ASK`) and answers it in `DeclaredOracle`."""

    def _put(self, question: Question):
        return question

    def reference(self, name: str, *args, **kwargs):
        """The reference's function `name`."""
        return self._put(Question("reference", (name, *args), kwargs))

    def formula_outputs(self, x, eps: float):
        """{Formula: output}: every member of the family on x (float64, gamma = 1, beta = 0)."""
        return self._put(Question("formula_outputs", (x, eps)))

    def statistics(self, x):
        """{(axes, ddof): (mean, var)} of x, float64."""
        return self._put(Question("statistics", (x,)))

    def wrong(self, name: str, *args, **kwargs):
        """ps7's wrong implementation `name`."""
        return self._put(Question("wrong", (name, *args), kwargs))

    def torch_layer_norm(self, x, normalized_shape, weight=None, bias=None, **options):
        """nn.LayerNorm's (or a member's) output and gradients in float64 (eps=, dy=, **member)."""
        return self._put(Question("torch_layer_norm", (x, normalized_shape, weight, bias), options))

    def torch_layer_norm_state(self, normalized_shape, elementwise_affine=True):
        """A new nn.LayerNorm's state_dict, as arrays."""
        return self._put(Question("torch_layer_norm_state", (normalized_shape, elementwise_affine)))

    def training_losses(self, run: dict, **member):
        """ps8's spirals run's loss per step."""
        return self._put(Question("training_losses", (run,), member))


# the questions a check declares: ASK.formula_outputs(x, eps) is the question that
# oracle.formula_outputs(x, eps) asks
ASK = _Asking()


def ask(backing, question: Question):
    """The answer of an oracle with the methods above (`LiveBacking`) to `question`."""
    return getattr(backing, question.method)(*question.args, **question.kwargs)


class DeclaredOracle(_Asking):
    """The oracle a judge gets: `backing` answers (it has `answer(question)`), but only the
    questions in `declared`."""

    def __init__(self, backing, declared) -> None:
        self._backing = backing
        self._questions = list(declared)
        self._memo: dict = {}
        self._declared: set | None = None

    def _put(self, question: Question):
        if self._declared is None:  # keyed on the first question only
            self._declared = {key(q, self._memo) for q in self._questions}
        if key(question, self._memo) not in self._declared:
            raise UndeclaredQuestion(
                f"the judge asked {question.method}(...), which its check does not declare "
                f"for these cases (a bug in the course)"
            )
        return self._backing.answer(question)


def key(value, memo: dict | None = None):
    """A hashable key of plain data, equal for equal questions: arrays by dtype, shape and the
    SHA-256 of their bytes (`memo`: each array's by its id, for one battery), dicts sorted,
    NumPy scalars as Python's, dataclasses by their type and fields."""
    memo = {} if memo is None else memo
    if isinstance(value, np.ndarray):
        found = memo.get(id(value))
        if found is None or found[0] is not value:
            data = np.ascontiguousarray(value)
            digest = hashlib.sha256(data.tobytes()).hexdigest()
            found = memo[id(value)] = (value, ("array", data.dtype.str, data.shape, digest))
        return found[1]
    if isinstance(value, np.generic):
        return value.item()
    if type(value) in (tuple, list):
        return (type(value).__name__, *(key(v, memo) for v in value))
    if type(value) is dict:
        return ("dict", *sorted((k, key(v, memo)) for k, v in value.items()))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # Question, Case...
        fields = (key(getattr(value, f.name), memo) for f in dataclasses.fields(value))
        return (type(value).__name__, *fields)
    return value


def fingerprint(value) -> str:
    """SHA-256 of `key(value)`, the same in every process (the download's recording's key)."""
    return hashlib.sha256(repr(key(value)).encode()).hexdigest()
