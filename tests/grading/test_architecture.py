"""ARCHITECTURE.md's examples are the course's own code (issue 42, item 6): each ```python block
whose first line names a file (`# lib/normlab/grading/ps9_dyt.py`) stands in that file as it is,
its lines in order and together, so the page cannot describe code that no longer exists."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def examples() -> list[tuple[str, str]]:
    """(file, code) of every named example of ARCHITECTURE.md."""
    page = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    found = []
    for block in BLOCK.findall(page):
        first, _, code = textwrap.dedent(block).partition("\n")
        if first.startswith("# ") and first.endswith(".py"):
            found.append((first[2:], code))
    return found


def test_every_named_example_stands_in_its_file():
    named = examples()
    assert len(named) >= 4
    for path, code in named:
        source = (REPO / path).read_text(encoding="utf-8")
        assert textwrap.dedent(code) in textwrap.dedent(source) or code in source, path
