"""Read an autograded test cell as the check calls it makes, without running it.

A test cell is a docstring and `check(...)` calls (with nbgrader's hidden-test markers); at
autograde nbgrader restores its source from the gradebook, so it is the instructor's text.
`parse_test_cell` turns it into `CheckCall`s; a cell that is anything more returns None and
runs in the kernel like any other cell, its verdict only as trustworthy as that kernel.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .spec import DEFAULT_SEED

_KEYWORDS = {"hidden": bool, "seed": int, "assignment": str}


@dataclass(frozen=True)
class CheckCall:
    """`check(grade_id, *names, hidden=..., seed=..., assignment=...)` as written in a cell."""

    grade_id: str
    names: tuple[str, ...]
    hidden: bool = False
    seed: int = DEFAULT_SEED
    assignment: str | None = None


def is_check_cell(cell) -> bool:
    """An autograded test cell: an nbgrader grade cell of code that is not an answer cell."""
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def _check_call(node: ast.stmt) -> CheckCall | None:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    call = node.value
    if not (isinstance(call.func, ast.Name) and call.func.id == "check") or not call.args:
        return None
    first, rest = call.args[0], call.args[1:]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    if not all(isinstance(arg, ast.Name) for arg in rest):
        return None
    options = {}
    for keyword in call.keywords:
        kind = _KEYWORDS.get(keyword.arg)
        value = getattr(keyword.value, "value", None)
        if kind is None or not isinstance(keyword.value, ast.Constant) or type(value) is not kind:
            return None
        options[keyword.arg] = value
    return CheckCall(first.value, tuple(arg.id for arg in rest), **options)


def parse_test_cell(source: str) -> list[CheckCall] | None:
    """The check calls of a test cell, in order, or None if it is not only check calls."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    body = tree.body[1:] if ast.get_docstring(tree, clean=False) is not None else tree.body
    calls = [_check_call(node) for node in body]
    if not calls or any(call is None for call in calls):
        return None
    return calls
