"""reuse: no library normalization called (the tripwire's report, read by every reuse cell)."""

from __future__ import annotations

from normlab_sandbox.cases import Case
from normlab_sandbox.tripwire import TRIPWIRE_REMOVED

from ..evidence import failure_of_call
from ..spec import CheckSpec
from .kind import NormKind, call, messy, norm_spec, rng_for

LIBRARY_PREFIXES = ("normlab.", "torch.")


def reuse_message(function: str, calls, forbidden=LIBRARY_PREFIXES) -> str | None:
    """The message when a call reached a library normalization, else None."""
    if TRIPWIRE_REMOVED in calls:
        return (
            f"Reference reuse: {function} removed the grader's profile hook (sys.setprofile), "
            f"so the grader cannot see what it calls; this cell scores 0."
        )
    hits = [c for c in calls if c.startswith(forbidden)]
    if not hits:
        return None
    return (
        f"Reference reuse: {function} called {hits[0]}. Calling a library implementation "
        f"earns no points for this cell (the other cells still grade your numbers); write the "
        f"computation yourself with NumPy."
    )


def reuse_spec(kind: NormKind, grade_id: str = "reference_reuse") -> CheckSpec:
    def make_cases(seed: int = 0, hidden: bool = True) -> list[Case]:
        rng = rng_for(seed, grade_id)
        shapes = [(3, 5)] + ([(2, 3, 4)] if hidden else [])
        return [call(kind, messy(rng, s), tag="reuse") for s in shapes]

    def judge(cases, results):
        for case, result in zip(cases, results, strict=True):
            message = reuse_message(kind.function, result.reference_calls)
            if message:
                return message
            problem = failure_of_call(kind.function, case, result)
            if problem:
                return problem
        return None

    summary = "written by hand: no library normalization called"
    return norm_spec(kind, grade_id, make_cases, judge, summary)
