"""The instructor's secrets in an nbgrader source notebook (solutions/<id>/<id>.ipynb).

The lines inside its `### BEGIN SOLUTION` / `### END SOLUTION` and `### BEGIN HIDDEN TESTS` /
`### END HIDDEN TESTS` regions: what nbgrader removes from the released notebook and what must
never reach a student (the site, the student download, the feedback). Shared by tests/grading and
tests/book.
"""

from __future__ import annotations

from pathlib import Path

import nbformat


def secret_lines_of(notebook: Path, min_length: int) -> set[str]:
    """The notebook's lines (stripped, of min_length characters or more) inside its
    BEGIN/END SOLUTION and BEGIN/END HIDDEN TESTS regions."""
    lines = set()
    for cell in nbformat.read(notebook, as_version=4).cells:
        inside = False
        for line in cell.source.splitlines():
            if "BEGIN SOLUTION" in line or "BEGIN HIDDEN TESTS" in line:
                inside = True
            elif "END SOLUTION" in line or "END HIDDEN TESTS" in line:
                inside = False
            elif inside and len(line.strip()) >= min_length:
                lines.add(line.strip())
    return lines
