"""The lab's own JavaScript and CSS: small, self-contained, safe to inline, wired to the page."""

from __future__ import annotations

import re
from pathlib import Path

LAB = Path(__file__).resolve().parents[2] / "lab"
PAGE = LAB / "index.md"
SCRIPT = LAB / "ln-lab.js"
STYLE = LAB / "ln-lab.css"
BUDGET_BYTES = 50 * 1024

STABLE_IDS = (
    "ln-lab",
    "lab-gamma",
    "lab-beta",
    "lab-tokens",
    "lab-red-team",
    "lab-witness",
    "lab-raw-stats",
    "lab-out-stats",
)


def panel_html() -> str:
    """The page's raw HTML block holding the panel: from <div id="ln-lab" to a blank line."""
    text = PAGE.read_text()
    start = text.index('<div id="ln-lab"')
    return text[start : text.index("\n\n", start)]


def test_our_js_and_css_weigh_under_50_kb():
    """The issue's budget: the lab's own JavaScript and CSS together under 50 KB."""
    weight = SCRIPT.stat().st_size + STYLE.stat().st_size
    print(f"lab JS + CSS: {weight} bytes ({weight / 1024:.1f} KB)")
    assert weight < BUDGET_BYTES


def test_assets_are_safe_to_inline():
    """The page inlines both files: nothing in them may close or confuse their element."""
    for path, closing in ((SCRIPT, "</script"), (STYLE, "</style")):
        text = path.read_text().lower()
        assert closing not in text, path
        assert "<!--" not in text and "<script" not in text, path


def test_assets_fetch_nothing():
    """No CDN, no import, no URL: the panel runs offline, from file:// too."""
    for path in (SCRIPT, STYLE):
        text = path.read_text()
        assert not re.search(r"https?://|//cdn|@import|url\(", text), path
    script = SCRIPT.read_text()
    assert not re.search(r"^\s*import\b|\bimport\(|\bfetch\(|XMLHttpRequest", script, re.M)


def test_page_includes_data_script_and_style():
    """The page carries normlab's block and includes the style and the module inline."""
    text = PAGE.read_text()
    assert "lab_data_html()" in text
    assert re.search(r"```\{raw\} html\n:file: ln-lab\.css\n```", text)
    assert re.search(r"```\{raw\} html\n:file: ln-lab\.js\n```", text)
    assert '<script type="module">' in text


def test_panel_is_one_html_block_with_every_stable_id():
    """A blank line would end MyST's HTML block mid-panel; each stable id appears once."""
    html = panel_html()
    assert html.rstrip().endswith("</div>")
    assert html.count("<div") == html.count("</div>")
    for element_id in STABLE_IDS:
        assert len(re.findall(rf'\bid="{element_id}"', html)) == 1, element_id
    assert 'role="status"' in html and 'aria-live="polite"' in html


def test_every_control_has_a_label():
    """Each input of the panel is named by a <label for>, a wrapping <label> or aria-label."""
    html = panel_html()
    labelled = set(re.findall(r'<label for="([^"]+)"', html))
    for tag in re.findall(r"<input\b[^>]*>", html):
        element_id = re.search(r'id="([^"]+)"', tag).group(1)
        wrapped = re.search(rf'<label><input[^>]*id="{element_id}"', html)
        assert element_id in labelled or "aria-label=" in tag or wrapped, element_id
