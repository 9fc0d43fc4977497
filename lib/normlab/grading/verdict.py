"""`Verdict`: what one check concludes, a category beside the message a student reads.

The category is what counts (the class report tallies it; rewording a message changes no
count); the message is what a student reads. A category is one of four outcomes,

    passed        the battery passed (no message)
    not written   the answer is missing: not defined, still `...` (a value), None (a function
                  whose body is still the release's comment stub), or NotImplementedError
    crashed       the student's code failed outside any misconception: it raised, its kernel
                  died, or the cell wrote to stderr (which nbgrader scores 0); also a cell
                  whose check could not run at all (a course bug, which scores 0 too)
    timed out     the cell ran past its timeout or the notebook's budget

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
# every category that is not one of these names a misconception
OUTCOMES = (PASSED, NOT_WRITTEN, CRASHED, TIMED_OUT)


@dataclass(frozen=True)
class Verdict:
    """A check's conclusion: `category` (see the module docstring) and the student's message."""

    category: str
    message: str | None = None

    def __post_init__(self) -> None:
        if (self.category == PASSED) != (self.message is None):
            raise ValueError("a passing verdict has no message, and only a passing one")

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


def as_verdict(found: Verdict | str | None, category: str) -> Verdict:
    """What a judge returned as a Verdict: None (or "") passes, a message names `category`."""
    if not found:
        return PASS
    if isinstance(found, Verdict):
        return found
    return Verdict(category, found)
