"""Chromium visits every page of the TOC once (tests/site_visit.py), on 127.0.0.1: no error, no
failed or foreign request, every image loaded and described, every formula rendered by MathJax,
no serious or critical accessibility violation (axe-core, vendored in _vendor/axe-core); a
screenshot of each page's first screen is saved. Each assertion is a test of its own, named by
its page."""

from __future__ import annotations

import base64

import pytest
from book_pages import part_files, toc_files
from site_visit import WIDTH_CHECKED, images, serious, value

pytestmark = [pytest.mark.slow, pytest.mark.browser]

PAGES = toc_files()
ONE_PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


@pytest.mark.parametrize("toc_file", PAGES)
def test_every_formula_is_rendered(site_visits, toc_file):
    math = value(site_visits, toc_file, "mathjax")
    assert math["containers"] >= math["sources"], (
        f"{math['sources']} formulas on the page, MathJax rendered {math['containers']}"
    )
    assert not math["errors"], f"MathJax errors: {math['errors']}"


@pytest.mark.parametrize("toc_file", PAGES)
def test_every_image_loads_and_has_alt_text(site_visits, toc_file):
    found = value(site_visits, toc_file, "images")
    assert not found["broken"], "images that did not load"
    assert not found["without_alt"], "images without alt text"


@pytest.mark.parametrize("toc_file", PAGES)
def test_no_serious_accessibility_violation(site_visits, toc_file):
    """axe-core's rules on the page as loaded: a serious or critical violation fails."""
    assert serious(value(site_visits, toc_file, "axe")) == []


@pytest.mark.parametrize("toc_file", PAGES)
def test_the_page_behaved_through_the_whole_visit(site_visits, toc_file):
    """No console or page error, failed request or request off 127.0.0.1, from the load to
    the last click of the visit."""
    visit = site_visits[toc_file]
    assert "goto" not in visit.errors, visit.errors.get("goto")
    assert not visit.problems, visit.problems


def test_worked_example_shows_the_hand_numbers(site_visits):
    """Chapter 3 shows the variance 1.25 and the first output -1.341641, as the reader sees them."""
    text = value(site_visits, "chapters/03_worked_example", "unfolded_text")
    assert "1.25" in text
    assert "-1.341641" in text


@pytest.mark.parametrize("toc_file", part_files("Exercises"))
def test_exercise_pages_show_every_display_formula_whole(site_visits, toc_file):
    """At 1280 px no display formula of an exercises page scrolls sideways (ps1's LayerNorm
    hid its "+ beta" behind a scrollbar)."""
    found = value(site_visits, toc_file, "wide_formulas")
    assert found["viewport_width"] == 1280
    assert found["wide"] == []


def test_the_width_check_flags_a_formula_wider_than_its_column(site_visits):
    """The check above has teeth: ps1's old display line (three formulas side by side) is
    flagged at 1280 px when MathJax typesets it on the page."""
    found = value(site_visits, WIDTH_CHECKED, "width_check_teeth")
    assert found["before"] == []
    assert len(found["after"]) == 1


def test_the_image_probe_names_the_broken_image_and_the_undescribed(
    tmp_path, serve_folder, browser_page
):
    """The images probe has teeth: on a page with a loaded, a missing and an undescribed
    image it waits for all three to settle and names the missing and the undescribed."""
    (tmp_path / "dot.png").write_bytes(base64.b64decode(ONE_PIXEL_PNG))
    (tmp_path / "index.html").write_text(
        '<main><img src="dot.png" alt="a dot"><img src="missing.png" alt="gone">'
        '<img src="dot.png"></main>',
        encoding="utf-8",
    )
    with serve_folder(tmp_path) as url:
        browser_page.page.goto(url + "index.html")
        found = images(browser_page.page)
    assert found == {"broken": ["missing.png"], "without_alt": ["dot.png"]}
