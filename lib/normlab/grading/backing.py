"""What backs the checks, behind one interface: their batteries, their answers, their callables.

A check (`spec.CheckSpec`) says what it reads and how it judges; it holds no input and no
answer. Those come from a *backing*, an object with

    cases(spec, seed, hidden, variant) -> [Case]   the check's battery (the visible cases
                                                   first; `variant`: a student's own
                                                   numbers, for a check that `varies`)
    answer(question)                               the oracle's answer to a judge's declared
                                                   question (`oracle.Question`)
    resolve(ref, made)                             the trusted callable a `Ref` names
    unanswered(results) -> Verdict | None          a run this backing could not answer

Two backings exist, and this package imports neither:

- the answer key's, where the course is installed: `normlab.answer_key.live`, named by the
  entry point `live` of the group `normlab.grading.backing` in pyproject.toml;
- the student download's, `recorded.RecordedBacking`: the visible batteries and the answers to
  their questions, recorded when the download was built. A download is told by its recording,
  `recorded.json` beside this package's modules.

`current()` finds the one this install has, once per process.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

GROUP = "normlab.grading.backing"


class NoBacking(LookupError):
    """Neither the answer key nor a recording is installed."""


@cache
def current():
    """The backing of this install: the student download's recording, or the registered one."""
    from . import recorded

    if recorded.DATA.is_file():
        return recorded.RecordedBacking(recorded.load())
    found = list(entry_points(group=GROUP))
    if not found:
        raise NoBacking(
            "normlab's checks have nothing to run on: install the course (make install), or "
            "the student download, whose checks carry their recorded cases"
        )
    return found[0].load()
