"""Sphinx extension: a page that shows code running `normlab` says which install runs it.

The chapters' code calls the course's full `normlab`, the reference implementation. The student
download (Exercises > Getting started) installs a `normlab` of checks and stubs instead: no
reference, so `normlab.layer_norm(r, eps=0.0)` on a new input raises there. A reader who copies
a chapter's cell into that environment must be told, on the page, before the first cell.

One note says it, kept here (`NOTE`), and this extension writes it under the title of every page
that imports normlab and shows a code cell (one not tagged `remove-cell` or `remove-input`:
`shows_normlab_code`), as the page's source is read. A page added later gets it too.
tests/book/test_install_note.py checks the rule and the built pages.
"""

from __future__ import annotations

import re

NOTE = """
:::{admonition} Running this page's code
:class: note course-install

The code on this page calls the course's own `normlab`, the reference implementation. It runs in
a checkout of the course's repository after `make book` (or `make install`), with the kernel of
its `.venv`. The `normlab` of the student download ({doc}`/exercises/getting_started`) runs the
problem sets' checks and carries no reference: there, `normlab.layer_norm(r, eps=0.0)` and the
like answer only the checks' own inputs and raise on any other.
:::
"""
MARK = "course-install"
IMPORTS = re.compile(r"^\s*(import normlab\b|from normlab(\.\w+)* import )", re.M)
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```\s*$", re.M | re.S)
HIDDEN = ("remove-cell", "remove-input")
FENCE = re.compile(r"^(`{3,}|:{3,})")


def _tags(cell_body: str) -> list[str]:
    found = re.search(r"^:tags:\s*\[(.*?)\]", cell_body, re.M)
    return [t.strip() for t in found[1].split(",")] if found else []


def shows_normlab_code(source: str) -> bool:
    """True for a MyST notebook that imports normlab and shows at least one code cell."""
    cells = [m["body"] for m in CELL.finditer(source)]
    imports = any(IMPORTS.search(body) for body in cells)
    shown = any(not set(_tags(body)) & set(HIDDEN) for body in cells)
    return imports and shown


def with_note(source: str) -> str:
    """`source` with NOTE after its first level-1 title outside a fence (a code cell's
    `# comment` is no title); unchanged when it has none."""
    lines = source.splitlines(keepends=True)
    fence = None
    for i, line in enumerate(lines):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened[1]
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None and line.startswith("# "):
            return "".join(lines[: i + 1]) + NOTE + "".join(lines[i + 1 :])
    return source


def _on_source_read(app, docname, source) -> None:
    if shows_normlab_code(source[0]):
        source[0] = with_note(source[0])


def setup(app):
    app.connect("source-read", _on_source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
