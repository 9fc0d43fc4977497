"""Copied numbers: a student's typed answers that are exactly another student's variant's (ps1).

A student who types a classmate's numbers loses those points like any wrong answer; the grade
cannot tell that from a slip, this can. For every submission it reads the answer cells' typed
numbers (`typed_values`: literals and their arithmetic; code such as `r.mean()` is skipped)
and flags each graded cell whose values are exactly another student's right answers
(`variant.describe`, `values.close`) and not the student's own. One number can match by chance
(many records have the mean 7), so a student is flagged once, with the classmate who explains
the most cells, and only for at least `MIN_CELLS`. It reads the submitted notebooks, never runs
them, so any grader gives the same flags; nothing here changes a grade.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from normlab.grading import CHECKS
from normlab.grading.values import close

from ..variant import describe

MIN_CELLS = 2  # one matching cell is no evidence: small whole numbers recur across variants
ARRAY_CALLS = {"np.array", "np.asarray", "numpy.array", "numpy.asarray"}  # of one literal
OPERATORS = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.divide,
    ast.Pow: np.power,
}


@dataclass(frozen=True)
class Flag:
    """`student`'s typed answers in `cells` are exactly `variant_of`'s variant's right answers."""

    student: str
    variant_of: str
    cells: tuple[str, ...]


def literal(node: ast.AST):
    """The value of an expression made of number literals only; ValueError for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = literal(node.operand)
        return -np.asarray(value) if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](literal(node.left), literal(node.right))
    if isinstance(node, ast.List | ast.Tuple):
        return [literal(item) for item in node.elts]
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ARRAY_CALLS:
        if len(node.args) == 1 and not node.keywords:
            return literal(node.args[0])
    raise ValueError(f"not a literal: {ast.dump(node)[:60]}")


def typed_values(source: str) -> dict[str, np.ndarray]:
    """{name: value} of the cell's top-level `name = <literal>` lines (the last one wins)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    found = {}
    for statement in tree.body:
        match statement:
            case ast.Assign(targets=[ast.Name(id=name)], value=value):
                try:
                    found[name] = np.asarray(literal(value), dtype=np.float64)
                except (ValueError, TypeError, ArithmeticError):
                    found.pop(name, None)  # computed: the student's own numbers
    return found


def same(typed: np.ndarray, answer) -> bool:
    """Exactly the answer, to 1e-9 relative in every entry (the checks' `close`)."""
    want = np.asarray(answer, dtype=np.float64)
    pairs = zip(typed.ravel(), want.ravel(), strict=True)  # read only where the shapes agree
    return typed.shape == want.shape and all(close(float(a), float(b)) for a, b in pairs)


def copied_cells(assignment: str, typed: dict, own: dict, other: dict) -> tuple[str, ...]:
    """The graded cells whose every target was typed as `other`'s answer and is not `own`'s."""
    cells = []
    for grade_id, spec in CHECKS[assignment].items():
        if spec.targets and all(t in typed and t in other for t in spec.targets):
            theirs = all(same(typed[t], other[t]) for t in spec.targets)
            mine = all(same(typed[t], own[t]) for t in spec.targets if t in own)
            if theirs and not mine:
                cells.append(grade_id)
    return tuple(cells)


def flags(assignment: str, submitted: dict[str, list[Path]]) -> list[Flag]:
    """The flags of a class: {student: their submitted notebooks} of `assignment`."""
    answers = {s: describe(assignment, s)["answers"] for s in submitted}
    found = []
    for student, paths in sorted(submitted.items()):
        typed = {}  # every typed value of the student's answer cells
        for path in paths:
            for cell in nbformat.read(path, as_version=4).cells:
                answer = cell.metadata.get("nbgrader", {}).get("solution")
                if cell.cell_type == "code" and answer:
                    typed.update(typed_values(cell.source))
        matches = [
            Flag(student, other, copied_cells(assignment, typed, answers[student], answers[other]))
            for other in sorted(answers)
            if other != student
        ]
        best = max(matches, key=lambda flag: len(flag.cells), default=None)
        if best is not None and len(best.cells) >= MIN_CELLS:
            found.append(best)
    return found
