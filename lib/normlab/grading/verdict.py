"""`Verdict`: what one check concludes, a category beside the message a student reads.

The category is what counts (the class report tallies it; rewording a message changes no
count). It is one of five outcomes,

    passed        no message; a `note` when it holds apart from another cell's misconception
    not written   the answer is missing: undefined, still `...`, None (the release's comment
                  stub), or NotImplementedError
    crashed       the code failed outside any misconception (it raised, its kernel died, the
                  cell wrote to stderr), or the check itself could not run (a course bug)
    timed out     past the cell's timeout or the notebook's budget
    not judged    another mistake hides what the cell checks, or the function hands its work
                  to a library (the reuse policy): no points, and which cell to look at

or else the misconception's name (by default the grade_id: `CheckSpec.category`). "timed out"
and a dead kernel are known only to the runner (`normlab.course.grader.notebook`).
"""

from __future__ import annotations

from dataclasses import dataclass

PASSED = "passed"
NOT_WRITTEN = "not written"
CRASHED = "crashed"
TIMED_OUT = "timed out"
NOT_JUDGED = "not judged"
# every category that is not one of these names a misconception
OUTCOMES = (PASSED, NOT_WRITTEN, CRASHED, TIMED_OUT, NOT_JUDGED)


@dataclass(frozen=True)
class Verdict:
    """A check's conclusion: `category` (see the module docstring) and the student's message.

    note   a pass's qualification, "apart from the variance: see population_variance"
    cause  a failure's cause in one line when it is the function's, not the cell's own
           misconception: later cells say "same cause as <cell>" (`session.Session.judge`)
    """

    category: str
    message: str | None = None
    note: str | None = None
    cause: str | None = None

    def __post_init__(self) -> None:
        if (self.category == PASSED) != (self.message is None):
            raise ValueError("a passing verdict has no message, and only a passing one")
        if self.note is not None and self.category != PASSED:
            raise ValueError("only a pass carries a note")

    @property
    def passed(self) -> bool:
        return self.category == PASSED

    def failure_text(self, hidden: bool) -> str:
        """The message as a test cell shows it; a hidden battery's says so (its evidence is an
        input the student never saw: the visible cases, first, passed)."""
        return f"{HIDDEN_LABEL}{self.message}" if hidden else self.message


HIDDEN_LABEL = "On a hidden input: "


PASS = Verdict(PASSED)


class Message(str):
    """A judge's message that names its cause too (see `Verdict.cause`)."""

    cause: str | None

    def __new__(cls, text: str, cause: str | None = None):
        message = super().__new__(cls, text)
        message.cause = cause
        return message


def as_verdict(found: Verdict | str | None, category: str) -> Verdict:
    """What a judge returned as a Verdict: None (or "") passes, a message names `category`."""
    if not found:
        return PASS
    if isinstance(found, Verdict):
        return found
    return Verdict(category, str(found), cause=getattr(found, "cause", None))
