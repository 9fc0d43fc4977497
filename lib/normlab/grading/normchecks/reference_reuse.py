"""reference_reuse: no library normalization called (the tripwire's report, read by every
reuse cell)."""

from __future__ import annotations

from normlab_sandbox.tripwire import TRIPWIRE_REMOVED

from ..judges import each_case, returned
from ..spec import CheckSpec, check_spec
from .kind import NormKind

LIBRARY_PREFIXES = ("normlab.", "torch.")


def reuse_message(function: str, calls, library: str = "a library implementation") -> str | None:
    """The message when a call reached a library normalization, else None."""
    if TRIPWIRE_REMOVED in calls:
        return (
            f"Reference reuse: {function} removed the grader's profile hook (sys.setprofile), "
            f"so the grader cannot see what it calls; this cell scores 0."
        )
    hits = [c for c in calls if c.startswith(LIBRARY_PREFIXES)]
    if not hits:
        return None
    return (
        f"Reference reuse: {function} called {hits[0]}. Calling {library} "
        f"earns no points for this cell (the other cells still grade your numbers); write the "
        f"computation yourself with NumPy."
    )


def no_reuse(read, library: str = "a library implementation"):
    """Reader of a reuse cell: the tripwire's report first, then `read`'s problem if any
    (a function that reaches a library is told so even when the call then fails)."""

    def read_calls(case, result):
        message = reuse_message(case.target, result.reference_calls, library)
        return (None, message) if message else read(case, result)

    return read_calls


def reference_reuse_spec(
    kind: NormKind, grade_id: str = "reference_reuse", *, points: float
) -> CheckSpec:
    return check_spec(
        grade_id,
        kind.function,
        each_case(no_reuse(returned)),
        "written by hand: no library normalization called",
        misconception="a library normalization called",
        points=points,
    )
