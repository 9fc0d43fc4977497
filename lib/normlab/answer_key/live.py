"""The answer key's backing (`normlab.grading.backing`): batteries, answers and callables, live.

pyproject.toml registers `LIVE` as the entry point `live` of the group `normlab.grading.backing`;
each of its methods names the module of this package that answers it (the oracle's questions,
`normlab.grading.oracle`, from the graders' private reference among them).
"""

from __future__ import annotations

from importlib import import_module

import numpy as np

from ..grading.oracle import Question, ask, key
from . import formula_outputs as outputs
from .wrong_implementations import BATCH_NORM_BACKWARD, GROUP_NORM

MEMO_SIZE = 1024  # answers kept: more than every battery of an assignment asks
# ps7's wrong group norms and batch-norm backwards, by function name
WRONG = {f.__name__: f for f in GROUP_NORM + BATCH_NORM_BACKWARD}


def _later(module: str, name: str):
    """A method calling `name` of this package's `module`, imported on the first call (torch
    only when asked; the batteries import this module)."""

    def method(self, *args, **kwargs):
        return getattr(import_module(f"{__package__}.{module}"), name)(*args, **kwargs)

    return method


class LiveBacking:
    """The answer key's backing; its oracle methods are `normlab.grading.oracle`'s.

    A question is answered once per process and kept by its `key`, its arrays read-only, for
    the next battery that asks it (a grader asks the same of every submission); a judge gets
    its own copy of a dict or list, whose arrays it reads and cannot change."""

    def __init__(self) -> None:
        self._answers: dict = {}

    def answer(self, question: Question):
        found = key(question)
        if found not in self._answers:
            if len(self._answers) >= MEMO_SIZE:
                del self._answers[next(iter(self._answers))]  # the oldest
            self._answers[found] = read_only(ask(self, question))
        answer = self._answers[found]
        return type(answer)(answer) if type(answer) in (dict, list) else answer  # a copy

    cases = _later("batteries", "cases")
    resolve = _later("trusted", "resolve")

    def unanswered(self, results) -> None:
        """Every question is answered live."""

    def reference(self, name: str, *args, **kwargs):
        from .reference import PUBLIC

        return PUBLIC[name](*args, **kwargs)

    formula_outputs = staticmethod(outputs.all_outputs)
    statistics = staticmethod(outputs.statistics)

    def wrong(self, name: str, *args, **kwargs):
        return WRONG[name](*args, **kwargs)

    torch_layer_norm = _later("torch_layer_norms", "layer_norm")
    torch_layer_norm_state = _later("torch_layer_norms", "fresh_state")
    training_losses = _later("torch_layer_norms", "training_losses")


def read_only(answer):
    """`answer` with every array in it made read-only: no judge changes what the next reads."""
    if isinstance(answer, np.ndarray):
        answer = answer.view()
        answer.flags.writeable = False
    elif type(answer) is dict:
        answer = {k: read_only(v) for k, v in answer.items()}
    elif type(answer) in (tuple, list):
        answer = type(answer)(read_only(v) for v in answer)
    return answer


LIVE = LiveBacking()
