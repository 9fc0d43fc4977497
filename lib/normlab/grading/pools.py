"""Each student's own numbers: an assignment's pool of variants, and whose variant is whose.

nbgrader sends every student the same notebook (its issue #1153), so PrairieLearn-style variants
are made here: an assignment with a pool (`POOLS`: ps1_by_hand, whose record and width a chapter
must not work for the student) gives each student the variant of their `slot`, SHA-256 of the id
modulo the pool's 256 slots. The pool (`ps1_pool.json`, made by scripts/ps1_pool.py) only grows
by appending and `slots` never changes, so a student's variant never moves. Who the student is:
`student_id`. The pool holds inputs only, so it ships in the student download.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

POOLS = {"ps1_by_hand": "ps1_pool.json"}
HERE = Path(__file__).parent


@cache
def _pool(assignment: str) -> dict:
    return json.loads((HERE / POOLS[assignment]).read_text(encoding="utf-8"))


def slots(assignment: str) -> int:
    return int(_pool(assignment)["slots"])


def slot(assignment: str, student: str) -> int:
    """The slot of `student` in `assignment`'s pool: SHA-256 of the id, modulo its slots."""
    digest = hashlib.sha256(student.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % slots(assignment)


def variants(assignment: str) -> list[dict]:
    """Every variant of the pool, in slot order, each with its "slot"."""
    found = _pool(assignment)["variants"][: slots(assignment)]
    return [{"slot": i, **v} for i, v in enumerate(found)]


def variant(assignment: str, student: str) -> dict:
    """The variant of `student`: {"slot", "record", "d_model"} for ps1."""
    if not student:
        raise ValueError("no student id: a variant belongs to a student")
    return variants(assignment)[slot(assignment, student)]


def student_id(claimed: str = "") -> tuple[str | None, str]:
    """(the id a notebook's variant is for, how it was found): the submitter while nbgrader
    grades, else the notebook's STUDENT, else the hub's user, else None."""
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        folder = Path.cwd().resolve()  # plain nbgrader's: <course>/autograded/<student>/<ps>
        if folder.parent.name and folder.parent.parent.name == "autograded":
            return folder.parent.name, "the submitter, while nbgrader grades"
    if claimed:
        return claimed, "STUDENT, in the notebook"
    hub = os.environ.get("JUPYTERHUB_USER", "")
    if hub:
        return hub, "your login on the course's JupyterHub"
    return None, "nothing: STUDENT is empty and this is no JupyterHub"
