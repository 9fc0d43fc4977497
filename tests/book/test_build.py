"""The book builds warning-free with `make book`'s command, offline, with every TOC page present."""

from __future__ import annotations

import re
import subprocess
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from book_pages import REPO, html_path, toc_files

from normlab.grading import ASSIGNMENTS, CHECKS

pytestmark = pytest.mark.slow

WORKED_EXAMPLE = "chapters/03_worked_example"


class _Links(HTMLParser):
    """Collect the URLs a page loads (scripts, styles, images, fonts) and the links it offers."""

    def __init__(self):
        super().__init__()
        self.loads: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "video", "audio") and attrs.get("src"):
            self.loads.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            rel = attrs.get("rel") or ""
            (self.loads if re.search(r"stylesheet|preload|icon", rel) else self.links).append(
                attrs["href"]
            )
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])


def _pages(site: Path) -> list[Path]:
    """The site's HTML pages (not the theme's template fragments under _static/)."""
    return [p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts]


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_build_log_has_no_warning(built_site):
    """The build passed with -n -W; the log must not even mention a Sphinx warning."""
    log = (REPO / "test-artifacts" / "book-build.log").read_text()
    warnings = [line for line in log.splitlines() if "WARNING:" in line]
    assert not warnings, warnings


def test_every_toc_page_is_built(built_site):
    """Each `file:` of `_toc.yml` has its HTML page."""
    missing = [f for f in toc_files() if not (built_site / html_path(f)).is_file()]
    assert not missing, f"pages of the TOC missing from {built_site}: {missing}"


def test_no_page_loads_anything_from_the_network(built_site):
    """No script, stylesheet, image or font URL with a host; CSS url(...) stays local too."""
    remote = []
    for page in _pages(built_site):
        for url in _parse(page).loads:
            if urlsplit(url).scheme in ("http", "https") or url.startswith("//"):
                remote.append(f"{page.relative_to(built_site)}: {url}")
    for css in built_site.rglob("*.css"):
        for url in re.findall(r"url\(\s*['\"]?(?:https?:)?//[^)]*\)", css.read_text("utf-8")):
            remote.append(f"{css.relative_to(built_site)}: {url}")
    assert not remote, remote


def test_mathjax_is_the_vendored_copy(built_site):
    """Pages with math load MathJax from the site itself, never from a CDN or from _static/."""
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    mathjax_path = config["sphinx"]["config"]["mathjax_path"]
    assert "://" not in mathjax_path
    assert (built_site / "mathjax" / "tex-chtml.js").is_file()
    assert (built_site / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()
    assert not list((built_site / "_static").rglob("tex-chtml.js")), "MathJax leaked into _static"
    page = built_site / html_path(WORKED_EXAMPLE)
    scripts = [u for u in _parse(page).loads if "tex-chtml.js" in u]
    assert scripts, f"{page.name} has math but loads no MathJax"
    for src in scripts:
        target = (page.parent / unquote(urlsplit(src).path)).resolve()
        assert target == (built_site / "mathjax" / "tex-chtml.js").resolve(), src


def test_local_links_point_at_files_that_exist(built_site):
    """Every relative link and asset of every page resolves to a file of the site."""
    broken = []
    for page in _pages(built_site):
        parsed = _parse(page)
        for url in parsed.loads + parsed.links:
            parts = urlsplit(url)
            if parts.scheme or url.startswith(("//", "#")) or not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(built_site)} -> {url}")
    assert not broken, broken


MISCONCEPTIONS = {
    "chapters/01_why_normalize": ("whole layer, batch included", "Cut."),
    "chapters/05_the_axis": ("the same, just a different axis", "Cut."),
    "chapters/07_rms_norm": ("must subtract the mean", "Kept, corrected."),
}
MY_CHAPTERS = [f for f in toc_files() if re.match(r"chapters/0[1-9]_", f)]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def _misconceptions(page: Path) -> list[str]:
    html = page.read_text(encoding="utf-8")
    pattern = r'<div class="[^"]*\bmisconception\b[^"]*">\s*<p class="admonition-title">(.*?)</p>'
    return [_text(title) for title in re.findall(pattern, html, flags=re.S)]


@pytest.mark.parametrize("chapter", sorted(MISCONCEPTIONS))
def test_each_seed_misconception_appears_once_where_it_belongs_with_its_verdict(
    built_site, chapter
):
    claim, verdict = MISCONCEPTIONS[chapter]
    titles = _misconceptions(built_site / html_path(chapter))
    assert len(titles) == 1, titles
    assert claim in titles[0] and titles[0].endswith(verdict), titles[0]


def test_every_chapter_file_is_in_the_toc_and_every_toc_chapter_exists():
    """Chapters can be added (the family chapter) and renumbered; none may be left out."""
    in_toc = sorted(f for f in toc_files() if f.startswith("chapters/"))
    on_disk = sorted(f"chapters/{p.stem}" for p in (REPO / "chapters").glob("*.md"))
    assert in_toc == on_disk
    assert len(MY_CHAPTERS) >= 9, MY_CHAPTERS


@pytest.mark.parametrize("chapter", MY_CHAPTERS)
def test_every_chapter_ends_with_a_link_to_its_exercise(built_site, chapter):
    html = (built_site / html_path(chapter)).read_text(encoding="utf-8")
    tail = html[html.find('id="exercise"') :]
    assert 'id="exercise"' in html, "no Exercise section"
    assert any(a in tail for a in ASSIGNMENTS), "the Exercise section names no assignment id"
    notebooks = re.findall(r'href="[^"]*exercises/(ps\d_[a-z_]+)/\1\.html"', tail)
    assert set(notebooks) & set(ASSIGNMENTS), "the Exercise section links no assignment's page"
    assert re.search(r'href="[^"]*exercises/index\.html"', tail), "no link to the exercises page"


def test_vendored_mathjax_is_committed_so_a_fresh_clone_builds_offline():
    """The MathJax files are tracked by git, not ignored and not fetched at build time."""
    tracked = subprocess.run(
        ["git", "ls-files", "_vendor/html/mathjax"], cwd=REPO, capture_output=True, text=True
    ).stdout.split()
    for needed in (
        "_vendor/html/mathjax/tex-chtml.js",
        "_vendor/html/mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff",
        "_vendor/html/mathjax/LICENSE",
    ):
        assert needed in tracked, f"{needed} is not committed"


def test_the_exercises_page_shows_the_message_the_grader_gives_today(built_site, capsys):
    """The page's example is computed at build: its cells, run now, print the ✗ line and the
    wrong-axis message (not a reuse void), and the built page shows every line of it."""
    source = (REPO / "exercises" / "index.md").read_text(encoding="utf-8")
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", source, flags=re.S)
    namespace: dict = {}
    capsys.readouterr()
    for cell in cells:  # the planted layer_norm, then the cell that prints its message
        exec(re.sub(r"^:tags:.*$", "", cell, flags=re.M), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    assert printed.startswith(f"✗ {CHECKS['ps2_layer_norm'].cell.independence.grade_id}:")
    assert "not judged" not in printed  # judged on its numbers, not on who wrote it
    html = (built_site / html_path("exercises/index")).read_text(encoding="utf-8")
    shown = unescape(_text(html))
    for line in printed.splitlines():
        assert _text(line.strip()) in shown
