"""A check's points live in one place, its CheckSpec; the source notebooks follow.

    python -m normlab.course points          # make release runs it before generate_assignment

For every source notebook (`solutions/<assignment>/*.ipynb`) it writes each autograded test
cell's nbgrader `points` from `normlab.grading.CHECKS`, then the totals in the headings (a
`## ` heading's "(N points)" sums the grade cells up to the next one, the title's all of them,
hand-graded included), and the course's reuse policy into the setup cell's `use_assignment(...)`
(nothing for the default), so every grader of the released notebook applies the same policy.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from normlab.grading import CHECKS
from normlab.grading.checkcell import is_check_cell
from normlab.grading.selfcheck import points
from normlab.grading.session import POLICIES as REUSE_VOIDS

TOTAL = re.compile(r"\((\d+(?:\.\d+)?) points?\)")


def _heading_level(cell) -> str | None:
    """A markdown cell's opening heading level, "#" or "##", when that heading holds a total."""
    first = cell.source.lstrip().split("\n", 1)[0]
    level = first.split(" ", 1)[0]
    markdown = cell.cell_type == "markdown"
    return level if markdown and level in ("#", "##") and TOTAL.search(first) else None


SETUP = re.compile(r'use_assignment\("(\w+)"(?:, reuse_voids="\w+")?((?:, student=\w+)?)\)')


def sync_notebook(nb, checks: dict, reuse_voids: str = REUSE_VOIDS[0]) -> None:
    """Set `nb`'s test-cell points from `checks` (grade_id -> CheckSpec), its heading totals
    and the reuse policy of its setup cell."""
    if reuse_voids not in REUSE_VOIDS:
        raise ValueError(f"reuse_voids must be one of {REUSE_VOIDS}; got {reuse_voids!r}")
    # the setup call with the policy (none for the default), its `student=` kept (ps1)
    policy = "" if reuse_voids == REUSE_VOIDS[0] else f', reuse_voids="{reuse_voids}"'
    part, title = None, None
    sums: dict[int, float] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.source = SETUP.sub(rf'use_assignment("\1"{policy}\2)', cell.source)
        meta = cell.metadata.get("nbgrader", {})
        spec = checks.get(meta.get("grade_id"))
        if spec is not None and is_check_cell(cell):
            meta["points"] = spec.points
        level = _heading_level(cell)
        if level == "#":
            title = index
        elif level == "##":
            part = index
        elif cell.cell_type == "markdown" and cell.source.lstrip().startswith("## "):
            part = None  # a heading without a total ends the part
        graded = float(meta.get("points", 0.0)) if meta.get("grade") or meta.get("task") else 0.0
        for holder in (part, title):
            if holder is not None:
                sums[holder] = sums.get(holder, 0.0) + graded
    for index, total in sums.items():  # the heading line's first total becomes the sum
        cell = nb.cells[index]
        heading = re.compile(rf"^({_heading_level(cell)} .*?){TOTAL.pattern}", re.MULTILINE)
        cell.source = heading.sub(rf"\g<1>({points(total)})", cell.source, count=1)


def sync_course(source_directory: Path, reuse_voids: str = REUSE_VOIDS[0]) -> list[Path]:
    """Sync every assignment's source notebooks; return the ones that changed."""
    changed = []
    for assignment, checks in CHECKS.items():
        for path in sorted((source_directory / assignment).glob("*.ipynb")):
            before = path.read_text(encoding="utf-8")
            nb = nbformat.reads(before, as_version=4)
            sync_notebook(nb, checks, reuse_voids)
            after = nbformat.writes(nb) + "\n"
            if after != before and nbformat.reads(after, 4) != nbformat.reads(before, 4):
                path.write_text(after, encoding="utf-8")
                changed.append(path)
    return changed
