"""Recorded visible batteries: what a student download checks with, instead of the reference.

A student's download (`make student`, `normlab.course.download.source`) carries the checks'
judges but no implementation of a function a problem set asks for, no misconception variant
and no case generator (so no hidden battery). What the judges need from those, for the
visible battery of every check, is recorded from the full normlab when the download is built,
into `recorded.json` beside this module:

- `cases`: the visible battery of every check, `spec.make_cases(DEFAULT_SEED, hidden=False)`;
- `answers`, by the fingerprint of the question: the oracle's answers about those cases
  (`normlab.grading.oracle`; its arguments are a case's inputs or a judge's constants, never
  what the student returned), and library calls: what normlab's public functions return on a
  case's own arguments (a student's `layer_norm` that calls `normlab.layer_norm(x, gamma,
  beta, eps)` gets the reference's numbers, as at grading, and loses its reuse cell), and
  what the trusted LayerNorms a check hands over (ps3's witness gets `Ref("layer_norm")` and
  the red team) return on the inputs the course's own witness gives them;
- `signatures` of those library functions (a call is matched after binding its arguments)
  and `refs`, which library function each trusted `Ref` stands for.

A question or a call that was not recorded raises `NotRecorded`: nothing here computes an
answer. The download's `normlab.layer_norm` and the rest are stubs that call `call`; a check
hands the student's code `ReplayNorm`-like closures where the grader hands trusted ones, and
a check whose run asked one of them about an unrecorded input says so instead of judging.

In a full install (the grader, the course's checkout) there is no recording: `RECORDING` is
None, `ORACLE` is the live oracle and `resolve` the graders' trusted callables.
"""

from __future__ import annotations

import builtins
import hashlib
import inspect
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from normlab_sandbox import wire
from normlab_sandbox.cases import WIRE_TYPES, Ref

from . import scripted_timer
from .spec import DEFAULT_SEED, CheckSpec
from .variants import Variant
from .verdict import CRASHED, Verdict

DATA = Path(__file__).with_name("recorded.json")
NOT_RECORDED = "not recorded"  # the probe a replayed LayerNorm reports after a miss


class NotRecorded(LookupError):
    """A question or a call the download has no recorded answer for."""


@dataclass(frozen=True)
class Pairs:
    """A dict whose keys are not plain data (the family's {Variant: output}), as its items."""

    items: tuple


@dataclass(frozen=True)
class Raised:
    """A recorded call that raised: replayed as the same built-in exception."""

    type_name: str
    message: str


REGISTRY = {**WIRE_TYPES, **{cls.__name__: cls for cls in (Variant, Pairs, Raised)}}


def _canonical(value):
    """`value` with every array C-contiguous and dicts as sorted items: equal questions give
    equal bytes."""
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value)
    if type(value) in (tuple, list):
        return type(value)(_canonical(v) for v in value)
    if type(value) is dict:
        return ("dict", tuple(sorted((k, _canonical(v)) for k, v in value.items())))
    return value


def fingerprint(question: tuple) -> str:
    """SHA-256 of the question (its name and arguments) in the wire's data-only encoding."""
    return hashlib.sha256(wire.dumps(_canonical(question), REGISTRY)).hexdigest()


def storable(answer):
    """An answer as plain data the wire encodes (see `Pairs`)."""
    if type(answer) is dict and not all(
        isinstance(k, (str, int, float, bool, tuple)) or k is None for k in answer
    ):
        return Pairs(tuple(answer.items()))
    return answer


def _restored(answer):
    if isinstance(answer, Pairs):
        return dict(answer.items)
    if isinstance(answer, Raised):
        kind = getattr(builtins, answer.type_name, None)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = RuntimeError
        raise kind(answer.message)
    return answer


def copied(value):
    """A fresh copy of an answer's arrays (the student's code may write into what it gets)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) in (tuple, list):
        return type(value)(copied(v) for v in value)
    return value


def describe(args: tuple) -> str:
    """A call's arguments in a few words: arrays by shape and dtype."""

    def one(value) -> str:
        if isinstance(value, np.ndarray):
            return f"a {value.dtype} array of shape {value.shape}"
        return repr(value)[:40]

    return ", ".join(one(a) for a in args)


def signature_of(fn) -> list:
    """A function's parameters as data: [(name, kind's name, has_default, default), ...]."""
    return [
        (p.name, p.kind.name, p.default is not p.empty, None if p.default is p.empty else p.default)
        for p in inspect.signature(fn).parameters.values()
    ]


def _signature(params: list) -> inspect.Signature:
    return inspect.Signature(
        [
            inspect.Parameter(name, getattr(inspect.Parameter, kind), default=default)
            if has_default
            else inspect.Parameter(name, getattr(inspect.Parameter, kind))
            for name, kind, has_default, default in params
        ]
    )


def call_question(params: list, name: str, args: tuple, kwargs: dict) -> tuple:
    """The question a call of library function `name` asks: its arguments bound to its
    parameters, defaults applied (so `f(x)` and `f(x, None)` ask the same)."""
    bound = _signature(params).bind(*args, **kwargs)
    bound.apply_defaults()
    return ("call", name, tuple(bound.arguments.items()))


@dataclass
class Recording:
    """What a download replays (see the module docstring)."""

    cases: dict  # assignment -> grade_id -> [Case]
    answers: dict  # fingerprint -> answer (storable)
    signatures: dict  # library name ("layer_norm.layer_norm") -> signature_of(...)
    refs: dict  # Ref name ("red_team.wrong_axis") -> library name

    @classmethod
    def loads(cls, data: bytes) -> Recording:
        return cls(**wire.loads(data, REGISTRY))

    def dumps(self) -> bytes:
        fields = {
            "cases": self.cases,
            "answers": dict(sorted(self.answers.items())),
            "signatures": self.signatures,
            "refs": self.refs,
        }
        return wire.dumps(fields, REGISTRY)

    def answer(self, question: tuple, what: str):
        """The recorded answer to `question`; NotRecorded (naming `what`) when there is none."""
        try:
            found = self.answers[fingerprint(question)]
        except KeyError:
            raise NotRecorded(
                f"{what} is not recorded in this student download. It carries no "
                f"implementation: normlab's answers were recorded, when it was built, for the "
                f"inputs of the visible checks only (the checks run on the reference when your "
                f"notebook is graded)."
            ) from None
        return _restored(found)

    def call(self, name: str, args: tuple, kwargs: dict):
        """What normlab's `name` returned, when the download was built, for these arguments."""
        params = self.signatures.get(name)
        if params is None:
            raise NotRecorded(f"normlab.{name} is not in this student download")
        question = call_question(params, name, args, kwargs)
        return copied(self.answer(question, f"normlab.{name}({describe(args)})"))

    def oracle(self) -> RecordedOracle:
        return RecordedOracle(self)

    def resolve(self, ref: Ref, made: dict):
        """The callable a check hands over: ps6's scripted timer as it is, a trusted LayerNorm
        as a replay of its recorded outputs (`replay_norm`)."""
        if ref.name.startswith(scripted_timer.PREFIX):
            return scripted_timer.resolve(ref, made)
        if ref.name in self.refs:
            made[("replay", len(made))] = norm_fn = replay_norm(self, self.refs[ref.name])
            return norm_fn  # in `made`, so `guarded.run_case` reads its probes
        raise KeyError(f"no recorded callable named {ref.name!r}")

    def checks(self, checks: dict) -> dict:
        """`checks` (CHECKS) with each spec's battery the recorded one (`replayed`)."""
        missing = [f"{a}:{g}" for a in checks for g in checks[a] if g not in self.cases.get(a, {})]
        if missing:
            raise NotRecorded(f"no recorded cases for {missing}: build the download again")
        return {
            assignment: {g: replayed(spec, self.cases[assignment][g]) for g, spec in specs.items()}
            for assignment, specs in checks.items()
        }


class RecordedOracle:
    """The oracle of a download: the answers recorded about the visible cases, replayed."""

    def __init__(self, recording: Recording) -> None:
        self._recording = recording

    def reference(self, name: str, *args, **kwargs):
        what = f"the reference's {name}({describe(args)})"
        return self._recording.answer(("reference", name, args, kwargs), what)

    def family(self, x, eps: float) -> dict:
        what = f"the family of variants on {describe((x,))} (eps = {eps:g})"
        return self._recording.answer(("family", x, eps), what)

    def statistics(self, x) -> dict:
        return self._recording.answer(("statistics", x), f"the statistics of {describe((x,))}")

    def wrong(self, name: str, *args, **kwargs):
        what = f"the wrong implementation {name}({describe(args)})"
        return self._recording.answer(("wrong", name, args, kwargs), what)

    # ps8's: asked of nn.LayerNorm in torch, answered from the recording (no torch needed)
    def torch_layer_norm(self, x, normalized_shape, weight=None, bias=None, **options) -> dict:
        what = f"nn.LayerNorm({normalized_shape})'s family on {describe((x,))}"
        question = ("torch_layer_norm", x, normalized_shape, weight, bias, options)
        return self._recording.answer(question, what)

    def torch_layer_norm_state(self, normalized_shape, elementwise_affine=True) -> dict:
        what = f"a new nn.LayerNorm({normalized_shape})'s state_dict"
        question = ("torch_layer_norm_state", normalized_shape, elementwise_affine)
        return self._recording.answer(question, what)

    def training_losses(self, run: dict, **member):
        what = f"the spirals run with the family's member {member or 'nn.LayerNorm'}"
        return self._recording.answer(("training_losses", run, member), what)


def replay_norm(recording: Recording, name: str):
    """A trusted LayerNorm handed to the student's code, `norm_fn(x)`: it replays what the
    graders' one returned, when the download was built, for the inputs the course's own
    witness probed; on any other input it raises NotRecorded and reports the miss as the
    probe NOT_RECORDED, so the check says it cannot run here rather than judge a witness
    that was never answered."""
    missed: list[str] = []

    def norm_fn(x):
        try:
            return recording.call(name, (x,), {})
        except NotRecorded:
            missed.append(describe((x,)))
            raise

    def probes():
        return ((NOT_RECORDED, missed[0]),) if missed else ()

    norm_fn.probes = probes
    return norm_fn


def replayed(spec: CheckSpec, cases: list) -> CheckSpec:
    """`spec` on its recorded visible battery: hidden=True (or another seed) is refused, and a
    run that asked a replayed LayerNorm about an unrecorded input is not judged."""

    def make_cases(seed: int = DEFAULT_SEED, hidden: bool = True) -> list:
        if hidden:
            raise NotRecorded(
                "the hidden battery is not in the student download: it runs when your "
                "notebook is graded"
            )
        if seed != DEFAULT_SEED:
            raise NotRecorded(f"the download recorded the visible battery of seed {DEFAULT_SEED}")
        return list(cases)

    def judge(cases, results, oracle) -> Verdict:
        missed = [r.probe(NOT_RECORDED) for r in results if r.probe(NOT_RECORDED)]
        if missed:
            return Verdict(
                CRASHED,
                f"This check cannot run in the student download: your code called the "
                f"norm_fn it was handed on {missed[0]}, an input it has no output for. The "
                f"download holds no LayerNorm: norm_fn replays the reference's outputs for the "
                f"inputs the course's own witness probes, so only those are answered here. "
                f"When your notebook is graded, this check runs on real ones.",
            )
        return spec.judge(cases, results, oracle)

    return replace(spec, make_cases=make_cases, judge=judge)


def _load() -> Recording | None:
    return Recording.loads(DATA.read_bytes()) if DATA.is_file() else None


RECORDING = _load()


class NotRecordedWarning(UserWarning):
    """A stub was called on an input the download has no output for (it raises too)."""


def call(name: str, *args, **kwargs):
    """The download's library functions (its `normlab.layer_norm` and co. are stubs calling
    this): the recorded output, or NotRecorded, also shown as a warning, since a witness that
    is tried on `normlab.layer_norm` in a notebook cell hides what it raises."""
    if RECORDING is None:
        raise NotRecorded(f"normlab.{name}: no recording in this install")
    try:
        return RECORDING.call(name, args, kwargs)
    except NotRecorded as exc:
        warnings.warn(str(exc), NotRecordedWarning, stacklevel=3)
        raise


if RECORDING is None:  # a full install: the live oracle, the graders' trusted callables
    from .oracle import LIVE as ORACLE
    from .trusted import resolve
else:  # a student download
    ORACLE = RECORDING.oracle()
    resolve = RECORDING.resolve
