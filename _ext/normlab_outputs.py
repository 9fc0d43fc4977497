"""Sphinx extension: when lib/normlab changes, re-execute every page instead of reusing the cache.

Jupyter Book executes the chapters through jupyter-cache, whose key is a notebook's own code
cells. A fix in `normlab` (say, in the variance) changes no chapter's code, so the cache would
keep serving the old outputs and the book would show numbers that the library no longer
computes. This extension hashes the library's source, and when the hash differs from the one of
the last successful build it empties the execution cache and marks every page outdated, so every
number is computed again. An unchanged library costs one hash of a few small files.

The grading machinery (`normlab.course`, `normlab.grading`) is left out of the hash: it changes
far more often than the numerics the pages show. The one page that runs it (the exercises page
shows a real grading message) is executed afresh whenever it is read (`execution_mode: force`),
and this extension makes it depend on those files and on `normlab_sandbox`'s, so Sphinx reads
it again when one of them changes (tests/book/test_outputs_extension.py checks both).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib" / "normlab"
SANDBOX = LIB.parent / "normlab_sandbox"  # the guarded call every check runs through
STAMP_NAME = "normlab-source.sha256"
NOT_ON_PAGES = ("course", "grading")  # subpackages that no page imports


def source_digest(lib: Path = LIB) -> str:
    """SHA-256 over the names and bytes of the library's .py files (but NOT_ON_PAGES)."""
    digest = hashlib.sha256()
    for path in sorted(lib.rglob("*.py")):
        if path.relative_to(lib).parts[0] in NOT_ON_PAGES:
            continue
        digest.update(path.relative_to(lib).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _stamp(app) -> Path:
    return Path(app.doctreedir) / STAMP_NAME


def runs_left_out_code(source: str) -> list[str]:
    """The subpackages of NOT_ON_PAGES that a page's source imports."""
    return [
        sub
        for sub in NOT_ON_PAGES
        if re.search(rf"normlab\.{sub}\b|from normlab import .*\b{sub}\b", source)
    ]


def _cache_dir(app) -> Path:
    configured = getattr(app.config, "nb_execution_cache_path", "")
    return Path(configured) if configured else Path(app.outdir).parent / ".jupyter_cache"


def _on_config_inited(app, config) -> None:
    app.normlab_digest = source_digest()
    stamp = _stamp(app)
    app.normlab_stale = not stamp.is_file() or stamp.read_text().strip() != app.normlab_digest
    if app.normlab_stale:
        shutil.rmtree(_cache_dir(app), ignore_errors=True)


def _on_env_get_outdated(app, env, added, changed, removed):
    return sorted(env.found_docs) if app.normlab_stale else []


def _on_source_read(app, docname, source) -> None:
    """A page that runs grading code depends on its files: Sphinx re-reads it when they change."""
    subs = runs_left_out_code(source[0])
    for folder in [LIB / sub for sub in subs] + ([SANDBOX] if subs else []):
        for path in sorted(folder.rglob("*.py")):
            app.env.note_dependency(str(path))


def _on_build_finished(app, exception) -> None:
    if exception is None:
        stamp = _stamp(app)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(app.normlab_digest + "\n")


def setup(app):
    app.connect("config-inited", _on_config_inited)
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.connect("source-read", _on_source_read)
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
