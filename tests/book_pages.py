"""The pages of the book, read from `_toc.yml` (jb-book format), as built HTML paths; and the
book's local Sphinx extensions (`_ext/`), loaded as modules for their tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
TOC = REPO / "_toc.yml"


def _files(entries) -> list[str]:
    found = []
    for entry in entries or ():
        if "file" in entry:
            found.append(entry["file"])
        for key in ("chapters", "sections", "parts"):
            found += _files(entry.get(key))
    return found


def toc_files() -> list[str]:
    """Every `file:` of the TOC, root first, without suffix: e.g. 'chapters/03_worked_example'."""
    toc = yaml.safe_load(TOC.read_text())
    files = [toc["root"], *_files(toc.get("parts")), *_files(toc.get("chapters"))]
    return [f.removesuffix(".md").removesuffix(".ipynb") for f in files]


def part_files(caption: str) -> list[str]:
    """The `file:` entries of the TOC part with this caption (e.g. "Chapters"), in order."""
    toc = yaml.safe_load(TOC.read_text())
    parts = [p for p in toc.get("parts", ()) if p.get("caption") == caption]
    if not parts:
        raise KeyError(f"_toc.yml has no part captioned {caption!r}")
    return [f.removesuffix(".md").removesuffix(".ipynb") for f in _files(parts[0].get("chapters"))]


def html_path(toc_file: str) -> str:
    """Where Sphinx writes the page of a TOC file, relative to the site root."""
    return f"{toc_file}.html"


def load_extension(name: str):
    """The module `_ext/<name>.py` (a local Sphinx extension of _config.yml), freshly loaded."""
    spec = importlib.util.spec_from_file_location(name, REPO / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
