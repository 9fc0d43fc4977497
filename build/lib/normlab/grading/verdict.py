"""`Verdict`: what one check concludes, a category beside the message a student reads.

The category is what counts (the class report tallies it; rewording a message changes no
count); the message is what a student reads. A category is one of five outcomes,

    passed        the battery passed (no message; a `note` when it holds apart from another
                  cell's misconception: "apart from the variance: see population_variance")
    not written   the answer is missing: not defined, still `...` (a value), None (a function
                  whose body is still the release's comment stub), or NotImplementedError
    crashed       the student's code failed outside any misconception: it raised, its kernel
                  died, or the cell wrote to stderr (which nbgrader scores 0); also a cell
                  whose check could not run at all (a course bug, which scores 0 too)
    timed out     the cell ran past its timeout or the notebook's budget
    not judged    another mistake hides what the cell checks ("not judged: fix axis first"),
                  or the function hands its work to a library (the course's reuse policy):
                  the cell keeps no points, and says which cell to look at

or else the name of the misconception the check caught: a stable identifier, by default the
grade_id of the cell that tests it (`CheckSpec.category`); a judge that can name a finer one
may return it. Judges decide passed, not written, crashed and misconceptions; "timed out"
and a dead kernel are known only to the runner that ran the cell (`normlab.course.grader.notebook`).
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
    cause  a failure's cause in one line when it is the function's, not this cell's own
           misconception ("layer_norm raised ValueError: ..."): the cells of the function
           after the first that shows it say "same cause as <cell>" (`selfcheck.run_check`)
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
        """The message of a failed battery as a test cell shows it: a failure of the hidden
        battery says so (it starts with the visible cases, which passed already, so its
        evidence is an input the student never saw)."""
        return f"{HIDDEN_LABEL}{self.message}" if hidden else self.message


HIDDEN_LABEL = "On a hidden input: "


PASS = Verdict(PASSED)


class Message(str):
    """A judge's message that names its cause too (see `Verdict.cause`): a rule or a reader
    may return one where it returns a message."""

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
