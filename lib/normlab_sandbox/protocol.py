"""The messages between the grader and the sandbox kernel, one dataclass each.

The grader (`normlab.course.grader`) and the kernel (`kernel`, `channel`) speak only these,
framed and encoded by `wire`, which rebuilds no other class (`WIRE_TYPES`). Everything the
kernel sends is untrusted: each message checks its own fields when it is built, so a malformed
one fails to decode (`wire.WireError`) and the grader replaces the kernel.

Setup, once: Setup(...) then `files` File(path, data) frames -> Ready(), or SetupFailed(reason).
`uid`: the grading slot's unprivileged uid (the grader as root), taken before anything else;
`workdir`: the submission's private folder (its notebooks left out: the autograded copy holds
the hidden tests); `torch`: true gives the notebook the real torch (ps8), false the stand-in
(`standins`; normlab is a stand-in either way); `student`, `variant`: ps1's submitter and their
numbers (`normlab.grading.pools`), which the notebook's `my_variant()` returns here.

Requests, grader -> kernel, one at a time, each with an `id` that every message the kernel sends
while serving it carries; exactly one of them is the reply (`REPLY_TO`), or Interrupted(id,
running) (the grader's timeout; `running`: the notebook's functions that were running), or
Failed(id, reason) (the reply would not encode). Bye() has none. RunCell's `test_cell` is the
grade_id of a test cell the grader could not read (`standins`); a `Stall`'s why, and a stalled
name's in NamesDone, is (verdict category, message); RunCase's `owners` are the notebook's
graded functions, whose library calls are each their own.

Questions, kernel -> grader, while a case runs: the student's code reached what lives only in
the grader (`channel`, `standins`): AskLibrary (a normlab function, called inside `owner`),
AskRef (a trusted callable the check handed over), AskTorch (torch, in a kernel without it).
Each gets an Answer(id, seq, value, error) before the reply; a Note (NumPy's variance) needs
none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .cases import WIRE_TYPES as CASE_TYPES
from .cases import Case, Ref, Result


class MalformedMessage(ValueError):
    """A message whose fields are not what the protocol says (the wire refuses it)."""


def _strings(value, what: str) -> tuple[str, ...]:
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
        raise MalformedMessage(f"{what} must be a sequence of strings")
    return tuple(value)


def _string_map(value, what: str) -> dict:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise MalformedMessage(f"{what} must be a dict with string keys")
    return value


def _reasons(value, what: str) -> dict:
    """{name: a stall's why, (category, message), both strings}."""
    reasons = {}
    for name, why in _string_map(value, what).items():
        if not (isinstance(why, (tuple, list)) and len(why) == 2):
            raise MalformedMessage("a stall's reason must be (category, message)")
        category, message = why
        if not isinstance(category, str) or not isinstance(message, str):
            raise MalformedMessage("a stall's reason must be two strings")
        reasons[name] = category, message[:500]
    return reasons


def _owner(value, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise MalformedMessage("AskLibrary's owner is a name")
    return value


@dataclass(frozen=True)
class _Checked:
    """A message that checks its fields when built, from its class's tables: `id` first, then
    the types of `_types` (else MalformedMessage(`_why`)), then each field of `_fields` through
    its check, `check(value, "Class.field")`, which returns the value kept."""

    _types: ClassVar[dict] = {}
    _why: ClassVar[str] = ""
    _fields: ClassVar[dict] = {}

    def __post_init__(self) -> None:
        if type(self.id) is not int:
            raise MalformedMessage("a message's id must be an int")
        if not all(isinstance(getattr(self, name), t) for name, t in self._types.items()):
            raise MalformedMessage(self._why)
        for name, check in self._fields.items():
            value = check(getattr(self, name), f"{type(self).__name__}.{name}")
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class Setup:
    uid: int | None
    workdir: str
    files: int
    limits: dict
    torch: bool = False
    student: str = ""
    variant: dict | None = None


@dataclass(frozen=True)
class File:
    path: str
    data: bytes


@dataclass(frozen=True)
class Ready:
    pass


@dataclass(frozen=True)
class SetupFailed:
    reason: str


@dataclass(frozen=True)
class RunCell:
    id: int
    source: str
    test_cell: str | None = None


@dataclass(frozen=True)
class AskNames(_Checked):
    id: int
    names: tuple[str, ...]
    _fields = {"names": _strings}


@dataclass(frozen=True)
class Stall(_Checked):
    id: int
    names: dict  # name -> (category, message)
    _fields = {"names": _reasons}


@dataclass(frozen=True)
class RunCase:
    id: int
    case: Case
    names: dict  # the check's target -> the notebook's name
    owners: tuple[str, ...] = ()  # the notebook's names of every graded function

    def case_function(self) -> str | None:
        """The notebook's name for the function this case calls."""
        return self.names.get(self.case.target)


@dataclass(frozen=True)
class Bye:
    pass


REQUESTS = (RunCell, AskNames, Stall, RunCase)


@dataclass(frozen=True)
class CellDone(_Checked):
    id: int
    outputs: list
    error: bool
    _types = {"outputs": list, "error": bool}
    _why = "CellDone carries a list of outputs and a bool"


@dataclass(frozen=True)
class NamesDone(_Checked):
    id: int
    defined: tuple[str, ...]
    stalled: dict  # name -> (category, message)
    _fields = {"defined": _strings, "stalled": _reasons}


@dataclass(frozen=True)
class StallDone(_Checked):
    id: int


@dataclass(frozen=True)
class CaseDone(_Checked):
    id: int
    result: Result
    outputs: list
    _types = {"result": Result, "outputs": list}
    _why = "CaseDone carries a Result and a list of outputs"


@dataclass(frozen=True)
class Interrupted(_Checked):
    id: int
    running: tuple[str, ...] = ()
    _fields = {"running": _strings}


@dataclass(frozen=True)
class Failed(_Checked):
    id: int
    reason: str
    _types = {"reason": str}
    _why = "Failed carries its reason as a string"
    _fields = {"reason": lambda reason, what: reason[:500]}


REPLIES = (CellDone, NamesDone, StallDone, CaseDone, Interrupted, Failed)
# the reply each request gets (or Interrupted, or Failed)
REPLY_TO = {RunCell: CellDone, AskNames: NamesDone, Stall: StallDone, RunCase: CaseDone}


@dataclass(frozen=True)
class AskLibrary(_Checked):
    id: int
    seq: int
    path: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    owner: str | None = None  # the innermost graded function on the call's stack
    _types = {"path": str, "args": tuple}
    _why = "AskLibrary carries a path and a tuple of arguments"
    _fields = {"owner": _owner, "kwargs": _string_map}


@dataclass(frozen=True)
class AskRef(_Checked):
    id: int
    seq: int
    ref: Ref
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    _types = {"args": tuple}
    _why = "AskRef carries a tuple of arguments"
    _fields = {"kwargs": _string_map}


@dataclass(frozen=True)
class AskTorch(_Checked):
    id: int
    seq: int
    path: str
    _types = {"path": str}
    _why = "AskTorch carries a path"


@dataclass(frozen=True)
class Note(_Checked):
    id: int
    kind: str
    name: str
    _types = {"kind": str, "name": str}
    _why = "a Note carries a kind and a name"


QUESTIONS = (AskLibrary, AskRef, AskTorch)


@dataclass(frozen=True)
class Answer:
    id: int
    seq: int
    value: object = None
    error: tuple[str, str] | None = None  # (exception name, message)


# everything the wire between grader and kernel rebuilds: the messages and what they carry
MESSAGES = (Setup, File, Ready, SetupFailed, *REQUESTS, Bye, *REPLIES, *QUESTIONS, Note, Answer)
WIRE_TYPES = {**CASE_TYPES, **{cls.__name__: cls for cls in MESSAGES}}
