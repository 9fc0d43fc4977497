"""A student's own variant, for the instructor: `python -m normlab.course variant ps1_by_hand
--student alice` prints it as JSON, with the answers the course's solution notebook gives for it.
"""

from __future__ import annotations

import numpy as np

from normlab.grading import CHECKS, pools

from .download.recording import solution_namespace


def _plain(value):
    return np.asarray(value).tolist() if isinstance(value, np.ndarray | np.number) else value


def describe(assignment: str, student: str) -> dict:
    """{"assignment", "student", "slot", the variant's fields, "answers": {name: value}}."""
    if assignment not in pools.POOLS:
        known = ", ".join(pools.POOLS) or "none"
        raise ValueError(f"{assignment!r} gives every student the same numbers (pools: {known})")
    if not student.strip():
        raise ValueError("an empty student id: a variant belongs to a student")
    student = student.strip()
    found = pools.variant(assignment, student)
    namespace = solution_namespace(assignment, student)
    names = dict.fromkeys(t for spec in CHECKS[assignment].values() for t in spec.targets)
    answers = {name: _plain(namespace[name]) for name in names if name in namespace}
    return {"assignment": assignment, "student": student, **found, "answers": answers}
