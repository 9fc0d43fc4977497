"""The student download's backing (`backing`): its recording, `recorded.json` (`Recording`: the
visible batteries, the answers to the questions their checks declare, complete by construction,
and what each trusted LayerNorm returns to the course's own witness; ARCHITECTURE.md, "The
student download"), replayed. Nothing here computes an answer: what was not recorded raises
`NotRecorded`; `hidden=True` is refused.
"""

from __future__ import annotations

import builtins
from copy import deepcopy
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from normlab_sandbox import wire
from normlab_sandbox.cases import WIRE_TYPES, Ref

from . import scripted_timer
from .formulas import Formula
from .oracle import Question, fingerprint
from .verdict import CRASHED, Verdict

DATA = Path(__file__).with_name("recorded.json")
NOT_RECORDED = "not recorded"  # the probe a replayed LayerNorm reports after a miss


class NotRecorded(LookupError):
    """A question or an input the download has no recorded answer for."""


class NotInDownload(RuntimeError):
    """A function of normlab's reference, called in the student download, which has none."""


@dataclass(frozen=True)
class Pairs:
    """A dict whose keys are not plain data (the family's {Formula: output}), as its items."""

    items: tuple


@dataclass(frozen=True)
class Raised:
    """A recorded question whose answer raised: replayed as the same built-in exception."""

    type_name: str
    message: str


REGISTRY = {**WIRE_TYPES, **{cls.__name__: cls for cls in (Formula, Pairs, Raised, Question)}}


def storable(answer):
    """An answer as plain data the wire encodes (see `Pairs`)."""
    if type(answer) is dict and not all(
        isinstance(k, (str, int, float, bool, tuple)) or k is None for k in answer
    ):
        return Pairs(tuple(answer.items()))
    return answer


def norm_question(name: str, x) -> tuple:
    """What a trusted LayerNorm `name` is asked when a witness calls it on x."""
    return ("norm", name, np.asarray(x))


@dataclass
class Recording:
    """What a download replays (see the module docstring)."""

    cases: dict  # assignment -> grade_id -> [Case] (a check that varies: {slot: [Case]})
    answers: dict  # fingerprint -> answer (storable)
    refs: list  # the trusted LayerNorms' Ref names a visible case hands over
    seed: int = 0  # the seed of the batteries recorded

    @classmethod
    def loads(cls, data: bytes) -> Recording:
        return cls(**wire.loads(data, REGISTRY))

    def dumps(self) -> bytes:
        fields = {"answers": dict(sorted(self.answers.items())), "refs": sorted(self.refs)}
        return wire.dumps(vars(self) | fields, REGISTRY)

    def answer(self, question, what: str = ""):
        """The recorded answer to `question`; NotRecorded (naming `what`) when there is none."""
        try:
            found = self.answers[fingerprint(question)]
        except KeyError:
            what = what or f"the answer to {question.method}(...)"
            raise NotRecorded(
                f"{what} is not recorded in this student download, which carries answers for "
                f"the inputs of the visible checks only (the checks run on the reference when "
                f"your notebook is graded)."
            ) from None
        if isinstance(found, Pairs):
            return dict(found.items)
        if isinstance(found, Raised):
            kind = getattr(builtins, found.type_name, None)
            if not (isinstance(kind, type) and issubclass(kind, Exception)):
                kind = RuntimeError
            raise kind(found.message)
        return found

    def resolve(self, ref: Ref, made: dict):
        """ps6's scripted timer as it is; a trusted LayerNorm as a replay (`replay_norm`)."""
        if ref.name.startswith(scripted_timer.PREFIX):
            return scripted_timer.resolve(ref, made)
        if ref.name in self.refs:
            made[("replay", len(made))] = norm_fn = replay_norm(self, ref.name)
            return norm_fn  # in `made`, so `guarded.run_case` reads its probes
        raise KeyError(f"no recorded callable named {ref.name!r}")


class RecordedBacking:
    """The download's backing (see `backing`): the recorded visible batteries and answers."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.answer = recording.answer  # answer(question)
        self.resolve = recording.resolve  # resolve(ref, made)

    def cases(self, spec, seed: int, hidden: bool, variant: dict | None) -> list:
        """The check's recorded visible battery; the hidden one, or another seed, is refused."""
        if hidden:
            raise NotRecorded(
                "the hidden battery is not in the student download: it runs when your "
                "notebook is graded"
            )
        if seed != self.recording.seed:
            found = self.recording.seed
            raise NotRecorded(f"the download recorded the visible battery of seed {found}")
        found = self.recording.cases.get(spec.assignment, {}).get(spec.grade_id)
        if found is None:
            raise NotRecorded(f"no recorded cases for {spec.grade_id}: build the download again")
        if not spec.varies:
            return list(found)
        if variant is None or variant.get("slot") not in found:
            raise NotRecorded("this check runs on your own variant: the download has no other")
        return list(found[variant["slot"]])

    def unanswered(self, results) -> Verdict | None:
        """A run that asked a replayed LayerNorm about an input it has no output for."""
        missed = [r.probe(NOT_RECORDED) for r in results if r.probe(NOT_RECORDED)]
        if not missed:
            return None
        return Verdict(
            CRASHED,
            f"This check cannot run in the student download: your code called the "
            f"norm_fn it was handed on {missed[0]}, an input it has no output for. The "
            f"download holds no LayerNorm: norm_fn replays the reference's outputs for the "
            f"inputs the course's own witness probes, so only those are answered here. "
            f"When your notebook is graded, this check runs on real ones.",
        )


def replay_norm(recording: Recording, name: str):
    """A trusted LayerNorm `norm_fn(x)` replaying the graders' one on the inputs the course's
    witness probed; another input raises NotRecorded and reports the probe NOT_RECORDED, so the
    check says it cannot run here rather than judge a witness that was never answered."""
    missed: list[str] = []

    def norm_fn(x):
        x = np.asarray(x)
        shown = f"a {x.dtype} array of shape {x.shape}"
        try:
            # a copy: the student's code may write into what it gets
            return deepcopy(recording.answer(norm_question(name, x), f"norm_fn({shown})"))
        except NotRecorded:
            missed.append(shown)
            raise

    norm_fn.probes = lambda: ((NOT_RECORDED, missed[0]),) if missed else ()
    return norm_fn
