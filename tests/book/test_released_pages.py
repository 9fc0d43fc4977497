"""The public site: each released notebook is a page with a download, and nothing from solutions/.

Uses the book helper's `built_site` fixture (the book built with `make book`'s command).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from book_pages import REPO
from notebook_secrets import secret_lines_of

from normlab.grading import ASSIGNMENTS

EXERCISES = REPO / "exercises"
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "hidden=True", "MARK SCHEME")
TEXT_SUFFIXES = {".html", ".txt", ".js", ".json", ".ipynb", ".md", ".py", ".css", ".xml"}


def secret_lines() -> set[str]:
    """Distinctive lines of the solutions and hidden tests that appear nowhere public."""
    public = "\n".join(
        [p.read_text() for p in EXERCISES.rglob("*.ipynb")]
        + [p.read_text() for p in (REPO / "chapters").rglob("*.md")]
        + [p.read_text() for p in (REPO / "lib" / "normlab").rglob("*.py")]
    )
    lines = set()
    for assignment in ASSIGNMENTS:
        lines |= {
            line
            for line in secret_lines_of(REPO / "solutions" / assignment / f"{assignment}.ipynb", 20)
            if line not in public
        }
    return lines


def visible_text(page: str) -> str:
    page = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def site_files(site: Path):
    return [p for p in site.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES]


def test_the_site_holds_no_solution_and_no_hidden_test(built_site):
    assert not [p for p in built_site.rglob("*") if "solutions" in p.relative_to(built_site).parts]
    secrets = secret_lines()
    assert len(secrets) > 50  # the check has teeth: many distinctive solution lines
    for path in site_files(built_site):
        raw = path.read_text(errors="replace")
        found = [m for m in MARKERS if m in raw]
        assert found == [], f"{path.relative_to(built_site)} contains {found}"
        text = visible_text(raw) if path.suffix == ".html" else raw
        leaked = [line for line in secrets if line in text]
        assert leaked == [], f"{path.relative_to(built_site)} shows solution lines: {leaked[:3]}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_released_notebook_is_a_page_with_a_notebook_download(built_site, assignment):
    page = built_site / "exercises" / assignment / f"{assignment}.html"
    assert page.is_file(), f"{assignment} is not a page of the Exercises part"
    source = f"_sources/exercises/{assignment}/{assignment}.ipynb"
    assert f'href="../../{source}"' in page.read_text()
    assert (built_site / source).read_bytes() == (
        EXERCISES / assignment / f"{assignment}.ipynb"
    ).read_bytes()
    assert "# YOUR CODE HERE" in visible_text(page.read_text())  # nbgrader_config's stub
