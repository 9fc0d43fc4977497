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
    match node:
        case ast.Expr(ast.Call(ast.Name("check"), [ast.Constant(str() as grade_id), *rest], keys)):
            names = tuple(arg.id for arg in rest if isinstance(arg, ast.Name))
            options = {k.arg: k.value.value for k in keys if isinstance(k.value, ast.Constant)}
            typed = all(type(options.get(k.arg)) is _KEYWORDS.get(k.arg) for k in keys)
            if len(names) == len(rest) and typed:
                return CheckCall(grade_id, names, **options)
    return None


def parse_test_cell(source: str) -> list[CheckCall] | None:
    """The check calls of a test cell, in order, or None if it is not only check calls."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    body = tree.body[1:] if ast.get_docstring(tree, clean=False) is not None else tree.body
    calls = [_check_call(node) for node in body]
    return calls if calls and None not in calls else None
