"""reference_reuse: no library normalization called (the tripwire's report, read by every
reuse cell)."""

from __future__ import annotations

from normlab_sandbox.tripwire import TRIPWIRE_REMOVED

from ..judges import each_case, returned
from ..spec import CheckSpec, check_spec
from ..verdict import Message
from .kind import NormKind

LIBRARY_PREFIXES = ("normlab.", "torch.")
# how every message of a function handing its work to a library begins (`session` reads it)
REUSE = "Reference reuse:"


def reuse_message(function: str, calls, library: str) -> Message | None:
    """The message when a call reached a library normalization, else None; its cause is what
    the function hands its work to (the reuse policy voids the function's other cells:
    `selfcheck.run_check` adds what it costs)."""
    if TRIPWIRE_REMOVED in calls:
        return Message(
            f"{REUSE} {function} removed the grader's profile hook (sys.setprofile), "
            f"so the grader cannot see what it calls.",
            cause="a library (it removed the grader's profile hook)",
        )
    hits = [c for c in calls if c.startswith(LIBRARY_PREFIXES)]
    if not hits:
        return None
    hint = "write the computation yourself with NumPy"
    return Message(f"{REUSE} {function} called {hits[0]}, {library}: {hint}.", cause=hits[0])


def no_reuse(read, library: str = "a library implementation"):
    """Reader of a reuse cell: the tripwire's report first, then `read`'s problem if any
    (a function that reaches a library is told so even when the call then fails). A call it
    made only through another of the student's graded functions is that function's reuse,
    not this one's (`Result.delegated`)."""

    def read_calls(case, result):
        message = reuse_message(case.target, result.reference_calls, library)
        return (None, message) if message else read(case, result)

    return read_calls


def reuse_spec(
    grade_id: str,
    function: str,
    *,
    points: float,
    read=returned,
    library: str = "a library implementation",
    summary: str = "written by hand: no library normalization called",
    misconception: str = "a library normalization called",
    **fields,
) -> CheckSpec:
    """The reuse cell of `function` (`voids`: under the course's policy its finding costs the
    function's other cells too): the tripwire's report of a library call, then `read`'s problem
    if any; `library` names what the function must not call."""
    judge = each_case(no_reuse(read, library))
    fields |= {"misconception": misconception, "points": points, "voids": True}
    return check_spec(grade_id, function, judge, summary, **fields)


def reference_reuse_spec(
    kind: NormKind, grade_id: str = "reference_reuse", *, points: float
) -> CheckSpec:
    return reuse_spec(
        grade_id, kind.function, points=points, builder=reference_reuse_spec, kind=kind
    )
