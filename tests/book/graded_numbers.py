"""The numbers the problem sets grade, and where a page shows one (issue 32, "no answer on a page").

An autograded value answer is a name that a solution cell binds to a number (`var_r = ...`, not
a `def`) and that an autograded test cell passes to `check(...)`. `numeric_answers()` yields each
one's numbers, computed by running the solution notebook's cells
(`normlab.course.download.recording.solution_namespace`).

`answer_namespaces(assignment)` is the one place that says where the answers are read from:
today the solution notebook's namespace; when an assignment draws a variant per student (issue
30: ps1's pool), it yields one namespace per variant of the pool, and every variant's answers
are looked for on every page.

A page shows an answer when a number in its unfolded text equals it at 4 significant digits
(sign aside); answers that are integers below 100 are left out, since small counts are everywhere.
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
    value: float


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


def answer_namespaces(assignment: str) -> Iterator[dict]:
    """The namespaces whose answers no page may show: the solution notebook's, for now.

    Issue 30 (ps1 per student): yield one namespace per variant of the assignment's pool here.
    """
    from normlab.course.download.recording import solution_namespace

    yield solution_namespace(assignment)


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
            found += [Answer(assignment, grade_id, name, v) for v in _flat(namespace[name])]
    return tuple(found)


def looked_for(answer: Answer) -> bool:
    """False for an integer answer below SMALL_INTEGERS (not looked for)."""
    return not (answer.value == round(answer.value) and abs(answer.value) < SMALL_INTEGERS)


def _rounded(value: float) -> float:
    return float(f"{abs(value):.{SIGNIFICANT}g}")


def shown_answers_in(text: str, answers) -> list[str]:
    """'name = value (as written)' for every answer that a number of `text` shows."""
    written = {}
    for as_written, value, percent, _ in numbers(text):
        if not percent:
            written.setdefault(_rounded(value), as_written)
    return sorted(
        {
            f"{a.check}: {a.name} = {a.value:.6g} (the page writes {written[_rounded(a.value)]})"
            for a in answers
            if looked_for(a) and _rounded(a.value) in written
        }
    )
