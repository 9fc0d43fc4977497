"""_ext/normlab_static.py: a change under _static/ reaches the site on an incremental build."""

from __future__ import annotations

from pathlib import Path

from book_pages import REPO, load_extension

STATIC = load_extension("normlab_static")


def test_every_page_depends_on_every_static_file():
    noted = []

    class Env:
        def note_dependency(self, path):
            noted.append(Path(path))

    class App:
        env = Env()

    STATIC._on_source_read(App(), "chapters/01_why_normalize", ["# A page\n"])
    assert REPO / "_static" / "course.css" in noted
    assert REPO / "_static" / "a11y.js" in noted


def test_a_static_file_added_or_removed_makes_every_page_outdated(tmp_path, monkeypatch):
    monkeypatch.setattr(STATIC, "STATIC", tmp_path)
    monkeypatch.setattr(STATIC.static_files, "__defaults__", (tmp_path,))
    (tmp_path / "course.css").write_text("a {}")

    class Env:
        found_docs = {"intro", "chapters/01_why_normalize"}

    env = Env()
    assert STATIC._on_env_get_outdated(None, env, set(), set(), set()) == []  # first build
    assert STATIC._on_env_get_outdated(None, env, set(), set(), set()) == []  # unchanged
    (tmp_path / "new.js").write_text("//")
    assert STATIC._on_env_get_outdated(None, env, set(), set(), set()) == sorted(env.found_docs)
    assert STATIC._on_env_get_outdated(None, env, set(), set(), set()) == []
