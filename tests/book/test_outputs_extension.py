"""_ext/normlab_outputs.py: a change in lib/normlab must make the book compute its numbers again."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from book_pages import REPO


def _load():
    spec = importlib.util.spec_from_file_location(
        "normlab_outputs", REPO / "_ext" / "normlab_outputs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    assert ext.source_digest(tmp_path) != first


def test_the_real_library_is_what_gets_hashed():
    ext = _load()
    assert ext.LIB == REPO / "lib" / "normlab"
    assert (ext.LIB / "layer_norm.py").is_file()
