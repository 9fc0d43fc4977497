"""`CheckSpec`: one grade cell's check, split into building cases and judging results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from normlab_sandbox.cases import Case, Result

DEFAULT_SEED = 0


@dataclass(frozen=True)
class CheckSpec:
    """The check behind one autograded test cell (named by the cell's nbgrader grade_id).

    targets     names the check reads from the student's namespace, in the order
                the test cell passes them to `check(grade_id, *targets)`
    make_cases  make_cases(seed, hidden=True) -> list[Case]; pure. hidden=False is
                the visible battery of the released notebook; hidden=True is the
                autograde battery, which starts with the visible cases
    judge       judge(cases, results) -> None (pass) or the message that names the
                misconception with the smallest evidence; pure
    summary     the misconception in a few words, for instructors' reports
    """

    grade_id: str
    targets: tuple[str, ...]
    make_cases: Callable[..., list[Case]]
    judge: Callable[[list[Case], list[Result]], str | None]
    summary: str


def registry(*specs: CheckSpec) -> dict[str, CheckSpec]:
    """Index specs by grade_id; a duplicate id is a mistake in the course."""
    found: dict[str, CheckSpec] = {}
    for spec in specs:
        if spec.grade_id in found:
            raise ValueError(f"two checks share the grade_id {spec.grade_id!r}")
        found[spec.grade_id] = spec
    return found
