"""The built lab page: normlab's block inside it, our script and style inline, on no other page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from normlab.lab_data import lab_data

pytestmark = pytest.mark.slow

LAB = Path(__file__).resolve().parents[2] / "lab"
DATA_ELEMENT = re.compile(r'<script type="application/json" id="lab-data">(.*?)</script>', re.S)


def test_page_carries_normlabs_block(built_site):
    """The JSON element was written by normlab.lab_data while the book executed the page."""
    found = DATA_ELEMENT.findall((built_site / "lab" / "index.html").read_text())
    assert len(found) == 1
    assert json.loads(found[0]) == lab_data()


def test_script_and_style_are_inline_on_the_lab_page(built_site):
    """Both files appear verbatim inside a module script and a style element of the page."""
    html = (built_site / "lab" / "index.html").read_text()
    script = (LAB / "ln-lab.js").read_text().strip()
    style = (LAB / "ln-lab.css").read_text().strip()
    assert re.search(r'<script type="module">\s*' + re.escape(script) + r"\s*</script>", html)
    assert re.search(r"<style>\s*" + re.escape(style) + r"\s*</style>", html)


def test_no_other_page_loads_the_lab(built_site):
    """Nothing of the lab is injected elsewhere: not into another page, not under _static/."""
    marker = "The Lab's live LayerNorm panel"
    pages = [p for p in built_site.rglob("*.html") if p != built_site / "lab" / "index.html"]
    assert pages
    assert not [p for p in pages if marker in p.read_text() or 'id="lab-data"' in p.read_text()]
    assert not list((built_site / "_static").rglob("ln-lab*"))
