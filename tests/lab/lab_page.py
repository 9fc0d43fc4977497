"""Drive the lab page in Chromium and read back what it shows (for the lab's browser tests).

What the page shows is read from the stable hooks: the rows of `#lab-raw-stats` and
`#lab-out-stats` (`data-mu`, `data-var`, `data-sigma`) and the cells of the two blocks
(`data-value`), all at full precision; the block itself is read from the page's own
`#lab-data` element, so a test compares the page with normlab on the page's own numbers.
"""

from __future__ import annotations

import numpy as np

LAB_PAGE = "lab/index.html"

READ_ROWS = """(id) => Array.from(document.querySelectorAll(`#${id} tbody tr`))
    .map((tr) => Object.assign({}, tr.dataset))"""

READ_BLOCK = """(selector) => Array.from(document.querySelectorAll(selector))
    .map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => Number(td.dataset.value)))"""

# an element's text colour and the backgrounds under it, up to the first opaque one
READ_COLOURS = """(selector) => {
    const node = document.querySelector(selector);
    const layers = [];
    for (let at = node; at; at = at.parentElement) {
        const background = getComputedStyle(at).backgroundColor;
        layers.push(background);
        if (!background.startsWith("rgba")) break;
    }
    return [getComputedStyle(node).color, layers];
}"""


class Lab:
    """The lab panel on a Playwright page."""

    def __init__(self, page):
        self.page = page

    @classmethod
    def open(cls, browser_page, site_url: str) -> Lab:
        browser_page.goto(site_url + LAB_PAGE)
        lab = cls(browser_page.page)
        lab.page.wait_for_selector('#ln-lab[data-ready="true"]')
        return lab

    def block(self) -> np.ndarray:
        """The page's whole raw block, from its #lab-data element."""
        data = self.page.evaluate("JSON.parse(document.getElementById('lab-data').text)")
        return np.array(data["x"])

    def set(self, element_id: str, value) -> None:
        """Type a value into a number field (fires input, then change on blur)."""
        self.page.fill(f"#{element_id}", str(value))
        self.page.dispatch_event(f"#{element_id}", "change")

    def rows(self, element_id: str) -> list[dict[str, float]]:
        """Each token row of a statistics table as {attribute: value}."""
        rows = self.page.evaluate(READ_ROWS, element_id)
        return [{name: float(value) for name, value in row.items()} for row in rows]

    def stats(self, element_id: str, name: str) -> np.ndarray:
        return np.array([row[name] for row in self.rows(element_id)])

    def matrix(self, element_id: str, part: str = "tbody") -> np.ndarray:
        """The values of a block's cells (`part`: its tbody, or its tfoot of column statistics)."""
        return np.array(self.page.evaluate(READ_BLOCK, f"#{element_id} {part} tr"))

    def contrast(self, selector: str) -> float:
        """WCAG contrast ratio of an element's text against the background it sits on."""
        text, layers = self.page.evaluate(READ_COLOURS, selector)
        return contrast_ratio(rgb(text)[:3], seen_background(layers))

    def witness(self) -> str:
        return self.page.get_attribute("#lab-witness", "data-state")

    def red_team_pressed(self) -> str:
        return self.page.get_attribute("#lab-red-team", "aria-pressed")


def rgb(css: str) -> tuple[float, float, float, float]:
    """'rgb(r, g, b)' or 'rgba(r, g, b, a)' as (r, g, b, alpha)."""
    parts = [float(p) for p in css[css.index("(") + 1 : -1].split(",")]
    return (*parts[:3], parts[3] if len(parts) == 4 else 1.0)


def seen_background(layers: list[str]) -> tuple[float, float, float]:
    """Composite translucent backgrounds (innermost first) over the first opaque one."""
    *over, base = [rgb(layer) for layer in layers]
    colour = base[:3] if base[3] == 1 else (255.0, 255.0, 255.0)  # the canvas is white
    for r, g, b, alpha in reversed(over):
        on_top = zip((r, g, b), colour, strict=True)
        colour = tuple(alpha * c + (1 - alpha) * below for c, below in on_top)
    return colour


def contrast_ratio(a, b) -> float:
    """WCAG 2 contrast ratio of two sRGB colours (0-255 channels)."""

    def luminance(colour):
        linear = [
            c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
            for c in (v / 255 for v in colour)
        ]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
