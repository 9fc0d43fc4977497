"""What backs the checks, behind one interface: their batteries, their answers, their callables.

A check (`spec.CheckSpec`) holds no input and no answer; a *backing* supplies them:

    cases(spec, seed, hidden, variant) -> [Case]   the check's battery, visible cases first
    answer(question)                               the oracle's answer (`oracle.Question`)
    resolve(ref, made)                             the trusted callable a `Ref` names
    unanswered(results) -> Verdict | None          a run this backing could not answer

This package imports neither backing: the answer key's (`normlab.answer_key.live`, the entry
point `live` of the group `normlab.grading.backing` in pyproject.toml) or the student
download's (`recorded.RecordedBacking`, told by `recorded.json` beside this package).
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
        return recorded.RecordedBacking(recorded.Recording.loads(recorded.DATA.read_bytes()))
    found = list(entry_points(group=GROUP))
    if not found:
        raise NoBacking(
            "normlab's checks have nothing to run on: install the course (make install), or "
            "the student download, whose checks carry their recorded cases"
        )
    return found[0].load()
