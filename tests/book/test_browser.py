"""Chromium visits every page of the TOC on 127.0.0.1: no error, no failed or foreign request,
every image loaded, every formula rendered by MathJax; a screenshot of each page is saved."""

from __future__ import annotations

import pytest
from book_pages import html_path, part_files, toc_files

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WAIT_FOR_MATHJAX = """async () => {
    if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) return null;
    await MathJax.startup.promise;
    return {
        containers: document.querySelectorAll("mjx-container").length,
        errors: Array.from(document.querySelectorAll("mjx-merror, [data-mjx-error]"))
            .map(e => e.getAttribute("data-mjx-error") || e.textContent),
    };
}"""

MATH_SOURCES = "document.querySelectorAll('.math').length"

BROKEN_IMAGES = """Array.from(document.images)
    .filter(img => !(img.complete && img.naturalWidth > 0))
    .map(img => img.getAttribute("src"))"""

IMAGES_WITHOUT_ALT = """Array.from(document.querySelectorAll("article img, main img"))
    .filter(img => !(img.getAttribute("alt") || "").trim())
    .map(img => img.getAttribute("src"))"""


@pytest.mark.parametrize("toc_file", toc_files())
def test_page_renders_cleanly(browser_page, site_url, toc_file):
    """Load the page, render its math, check images and requests, save a screenshot."""
    page = browser_page.page
    browser_page.goto(site_url + html_path(toc_file))
    math_sources = page.evaluate(MATH_SOURCES)
    if math_sources:
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
        rendered = page.evaluate(WAIT_FOR_MATHJAX)
        assert rendered["containers"] >= math_sources, (
            f"{math_sources} formulas on the page, MathJax rendered {rendered['containers']}"
        )
        assert not rendered["errors"], f"MathJax errors: {rendered['errors']}"
    page.wait_for_load_state("networkidle")
    assert not page.evaluate(BROKEN_IMAGES), "images that did not load"
    assert not page.evaluate(IMAGES_WITHOUT_ALT), "images without alt text"
    browser_page.screenshot(toc_file)
    assert not browser_page.problems(), browser_page.problems()


def test_worked_example_shows_the_hand_numbers(browser_page, site_url):
    """Chapter 3 shows the variance 1.25 and the first output -1.341641, as the reader sees them."""
    browser_page.goto(site_url + html_path("chapters/03_worked_example"))
    text = browser_page.page.inner_text("article")
    assert "1.25" in text
    assert "-1.341641" in text
    assert not browser_page.problems(), browser_page.problems()


# display formulas that scroll sideways, or stick out of their box
WIDE_FORMULAS = """Array.from(document.querySelectorAll("mjx-container[display='true']"))
    .filter(m => {
        const box = (m.closest("div.math") || m.parentElement).getBoundingClientRect();
        const inner = (m.firstElementChild || m).getBoundingClientRect();
        return m.scrollWidth > m.clientWidth + 1 || inner.right > box.right + 1;
    })
    .map(m => m.textContent.slice(0, 80))"""


@pytest.mark.parametrize("toc_file", part_files("Exercises"))
def test_exercise_pages_show_every_display_formula_whole(browser_page, site_url, toc_file):
    """At 1280 px no display formula of an exercises page scrolls sideways (ps1's LayerNorm
    hid its "+ beta" behind a scrollbar)."""
    page = browser_page.page
    browser_page.goto(site_url + html_path(toc_file))
    if page.evaluate(MATH_SOURCES):
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
        page.evaluate(WAIT_FOR_MATHJAX)
    assert page.viewport_size["width"] == 1280
    assert page.evaluate(WIDE_FORMULAS) == []


def test_the_width_check_flags_a_formula_wider_than_its_column(browser_page, site_url):
    """The check above has teeth: ps1's old display line (three formulas side by side) is
    flagged at 1280 px when MathJax typesets it on the page."""
    page = browser_page.page
    browser_page.goto(site_url + html_path("exercises/ps1_by_hand/ps1_by_hand"))
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate(WAIT_FOR_MATHJAX)
    assert page.evaluate(WIDE_FORMULAS) == []
    page.evaluate(OLD_PS1_LINE)
    assert len(page.evaluate(WIDE_FORMULAS)) == 1


OLD_PS1_LINE = r"""async () => {
    const div = document.createElement("div");
    div.className = "math notranslate nohighlight";
    div.textContent = String.raw`\[\mu = \frac{1}{d}\sum_{k=1}^{d} r_k, \qquad
        \sigma^2 = \frac{1}{d}\sum_{k=1}^{d} (r_k - \mu)^2, \qquad
        \mathrm{LayerNorm}(r)_k = \gamma_k \frac{r_k - \mu}{\sqrt{\sigma^2 + \epsilon}}
        + \beta_k .\]`;
    document.querySelector("div.math").after(div);
    await MathJax.typesetPromise([div]);
}"""
