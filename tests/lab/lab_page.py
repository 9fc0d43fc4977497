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

READ_BLOCK = """(id) => Array.from(document.querySelectorAll(`#${id} tbody tr`))
    .map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => Number(td.dataset.value)))"""


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

    def matrix(self, element_id: str) -> np.ndarray:
        return np.array(self.page.evaluate(READ_BLOCK, element_id))

    def witness(self) -> str:
        return self.page.get_attribute("#lab-witness", "data-state")

    def red_team_pressed(self) -> str:
        return self.page.get_attribute("#lab-red-team", "aria-pressed")
