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


def _front_matter(source: Path) -> str:
    text = source.read_text(encoding="utf-8")
    return text.split("---", 2)[1] if text.startswith("---") else ""


def test_a_page_that_runs_left_out_code_is_executed_afresh_on_every_read():
    """Grading code is not hashed: a page that runs it must not be served from the cache."""
    ext = _load()
    pages = [REPO / f"{page}.md" for page in toc_files()]
    code = {p: _executed_code(p) for p in pages if p.is_file()}
    assert code[REPO / "chapters" / "03_worked_example.md"], "no code cells: the scan is broken"
    running = [p for p, cells in code.items() if ext.runs_left_out_code(cells)]
    assert REPO / "exercises" / "index.md" in running, "the exercises page runs normlab.grading"
    for page in running:
        assert re.search(r"execution_mode:\s*force", _front_matter(page)), (
            f"{page.relative_to(REPO)} runs {ext.runs_left_out_code(code[page])} but may be "
            "served from the execution cache"
        )


def test_a_page_that_runs_grading_code_depends_on_its_files():
    ext = _load()
    noted = []

    class Env:
        def note_dependency(self, path):
            noted.append(Path(path))

    class App:
        env = Env()

    ext._on_source_read(App(), "exercises/index", ["from normlab.grading import check\n"])
    assert ext.LIB / "grading" / "selfcheck.py" in noted
    assert ext.SANDBOX / "guarded.py" in noted
    folders = (ext.LIB / "grading", ext.SANDBOX)
    assert all(any(p.is_relative_to(f) for f in folders) for p in noted)
    noted.clear()
    ext._on_source_read(App(), "chapters/03_worked_example", ["import normlab\n"])
    assert noted == []
