"""Sphinx extension: a folded code cell's summary is named by the words it shows (WCAG 2.5.3).

myst-nb folds a cell tagged `hide-input` or `hide-output` in a `<details>` whose `<summary>`
shows "Show code cell source" but carries aria-label="Toggle hidden content": a screen reader
announces a name that a sighted reader never sees, and speech control cannot find it by its
words (axe-core's label-content-name-mismatch, serious; tests/book/test_browser.py runs axe on
every page). This extension writes the same HTML without that label, so the summary is named
by its text. It must come after myst_nb in `_config.yml`'s extensions (it replaces myst-nb's
HTML visitor for the node).
"""

from __future__ import annotations

from html import escape

from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput


def visit_hidden_cell(self, node) -> None:
    """myst-nb's `visit_HideCellInput`, less the summary's aria-label."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n')
    self.body.append("<summary>\n")
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n')
    self.body.append("</summary>\n")


def setup(app):
    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_HideCellInput))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
