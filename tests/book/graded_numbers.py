"""The numbers the problem sets grade, and where a page shows one (issue 32, "no answer on a page").

An autograded value answer is a name that a solution cell binds to a number or a vector
(`var_r = ...`, not a `def`) and that an autograded test cell passes to `check(...)`.
`numeric_answers()` yields each one's numbers, computed by running the solution notebook's
cells (`normlab.course.download.recording.solution_namespace`).

`answer_namespaces(assignment)` says where the answers are read from: the solution notebook's
namespace; for an assignment that draws a variant per student (issue 30: ps1's pool), one
namespace per variant of the pool (the notebook run as a student of each slot), and every
variant's answers are looked for on every page.

A page shows an answer when its unfolded text holds every number of it at 4 significant digits
(sign aside): a number, or every entry of a vector (one entry alone is no answer: a third or a
half is on many pages). Integers below 100 are left out, since small counts are everywhere.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np
from book_pages import REPO
from numbers_in_text import numbers

SIGNIFICANT = 4
SMALL_INTEGERS = 100  # an integer answer below this is not looked for


@dataclass(frozen=True)
class Answer:
    assignment: str
    check: str  # the test cell's grade_id
    name: str  # the variable the student sets
    values: tuple[float, ...]  # a number, or a vector's entries


def _cells(assignment: str) -> list[dict]:
    path = REPO / "solutions" / assignment / f"{assignment}.ipynb"
    return json.loads(path.read_text())["cells"]


def value_answer_checks(assignment: str) -> list[tuple[str, str]]:
    """(grade_id, name) for every value answer an autograded test cell checks, read statically."""
    bound, checked = set(), []
    for cell in _cells(assignment):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse("".join(cell["source"]))
        if meta.get("solution"):
            bound |= {
                target.id
                for node in ast.walk(tree)
                if isinstance(node, ast.Assign)
                for target in node.targets
                if isinstance(target, ast.Name)
            }
        elif meta.get("grade"):
            for node in ast.walk(tree):
                is_check = isinstance(node, ast.Call) and getattr(node.func, "id", "") == "check"
                if is_check:
                    names = [a.id for a in node.args[1:] if isinstance(a, ast.Name)]
                    checked += [(meta["grade_id"], name) for name in names]
    return [pair for pair in dict.fromkeys(checked) if pair[1] in bound]


def student_per_slot(assignment: str) -> dict[int, str]:
    """A student id for every slot of an assignment's pool ("student-<n>", the first to land
    on each slot)."""
    from normlab.grading import pools

    found: dict[int, str] = {}
    n = 0
    while len(found) < pools.slots(assignment):
        student = f"student-{n}"
        found.setdefault(pools.slot(assignment, student), student)
        n += 1
    return found


def answer_namespaces(assignment: str) -> Iterator[dict]:
    """The namespaces whose answers no page may show: the solution notebook's, run as a
    student of every slot for an assignment with a pool of variants."""
    from normlab.course.download.recording import solution_namespace
    from normlab.grading import pools

    if assignment not in pools.POOLS:
        yield solution_namespace(assignment)
        return
    for student in student_per_slot(assignment).values():
        yield solution_namespace(assignment, student)


def _flat(value) -> list[float]:
    if isinstance(value, bool | np.bool_):
        return []
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        return []
    return [float(v) for v in array.reshape(-1) if math.isfinite(float(v))]


@cache
def numeric_answers(assignment: str) -> tuple[Answer, ...]:
    """Every number of every autograded value answer of `assignment`, over its namespaces."""
    checks = value_answer_checks(assignment)
    if not checks:
        return ()
    found = []
    for namespace in answer_namespaces(assignment):
        for grade_id, name in checks:
            values = tuple(_flat(namespace[name]))
            if values:
                found.append(Answer(assignment, grade_id, name, values))
    return tuple(dict.fromkeys(found))


def looked_for(value: float) -> bool:
    """False for an integer below SMALL_INTEGERS (not looked for)."""
    return not (value == round(value) and abs(value) < SMALL_INTEGERS)


def _rounded(value: float) -> float:
    return float(f"{abs(value):.{SIGNIFICANT}g}")


def shown_answers_in(text: str, answers) -> list[str]:
    """'name = value (as written)' for every answer that `text` shows: a number anywhere; a
    vector (the values looked for: at least one) only whole, its numbers one after the other
    in the text's order, so a page whose simple numbers (0.5, 1.5, ...) are scattered does not
    show every pleasant record that has them."""
    sequence = [
        (as_written, _rounded(v)) for as_written, v, percent, _ in numbers(text) if not percent
    ]
    written = {}
    for as_written, rounded in sequence:
        written.setdefault(rounded, as_written)
    values = [rounded for _, rounded in sequence]
    found = set()
    for a in answers:
        wanted = [_rounded(v) for v in a.values if looked_for(v)]
        if not wanted or not all(w in written for w in wanted):
            continue
        if len(a.values) > 1 and not _in_order([_rounded(v) for v in a.values], values):
            continue
        page = ", ".join(written[w] for w in wanted)
        shown = ", ".join(f"{v:.6g}" for v in a.values)
        found.add(f"{a.check}: {a.name} = {shown} (the page writes {page})")
    return sorted(found)


def _in_order(wanted: list, values: list) -> bool:
    """Do the `wanted` numbers appear one after the other somewhere in `values`?"""
    n = len(wanted)
    return any(values[i : i + n] == wanted for i in range(len(values) - n + 1))
