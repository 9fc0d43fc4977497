"""_ext/normlab_outputs.py: a change in lib/normlab must make the book compute its numbers again."""

from __future__ import annotations

import re
from pathlib import Path

from book_pages import REPO, load_extension, toc_files


def _load():
    return load_extension("normlab_outputs")


def test_digest_changes_with_any_library_file_and_only_then(tmp_path: Path):
    ext = _load()
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    first = ext.source_digest(tmp_path)
    assert ext.source_digest(tmp_path) == first
    (tmp_path / "notes.txt").write_text("not code")
    assert ext.source_digest(tmp_path) == first
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")
    second = ext.source_digest(tmp_path)
    assert second != first
    (tmp_path / "grading").mkdir()
    (tmp_path / "grading" / "checks.py").write_text("z = 4\n")
    assert ext.source_digest(tmp_path) == second  # left out: no page imports it


def test_the_real_library_is_what_gets_hashed():
    ext = _load()
    assert ext.LIB == REPO / "lib" / "normlab"
    assert (ext.LIB / "layer_norm.py").is_file()


def _executed_code(source: Path) -> str:
    """The code cells of a MyST notebook page ("" for a plain Markdown page)."""
    text = source.read_text(encoding="utf-8")
    return "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, flags=re.S))


def test_no_executed_page_imports_what_the_digest_leaves_out():
    """If a page ran normlab.course or normlab.grading, its outputs could go stale."""
    ext = _load()
    pages = [REPO / f"{page}.md" for page in toc_files()]
    code = {p.name: _executed_code(p) for p in pages if p.is_file()}
    assert code["03_worked_example.md"], "no code cells found: the scan itself is broken"
    for name, cells in code.items():
        for sub in ext.NOT_ON_PAGES:
            assert not re.search(rf"normlab\.{sub}\b|from normlab import .*\b{sub}\b", cells), (
                f"{name} runs normlab.{sub}"
            )
