"""Sphinx extension: a change under _static/ reaches the built site on the next build.

Sphinx copies `html_static_path` (our `_static/`: the course's CSS, and `a11y.js`) when it
finishes writing pages, and an incremental build with no page out of date stops before that:
"no targets are out of date", and the old CSS stays in `_build/html/_static/`. So every page
depends on every file under `_static/` (Sphinx re-reads a page when a file it depends on is
newer), and a file added or removed there makes every page outdated (the environment keeps the
list of names it was built with). The pages are then written again from the execution cache,
nothing is executed, and the static files are copied.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parents[1] / "_static"


def static_files(folder: Path = STATIC) -> list[str]:
    """The files under `folder`, as sorted paths relative to it."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _on_env_get_outdated(app, env, added, changed, removed):
    now = static_files()
    before = getattr(env, "normlab_static_files", None)
    env.normlab_static_files = now
    return sorted(env.found_docs) if before is not None and before != now else []


def _on_source_read(app, docname, source) -> None:
    for name in static_files():
        app.env.note_dependency(str(STATIC / name))


def setup(app):
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.connect("source-read", _on_source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
