"""_ext/normlab_a11y.py: a folded code cell's summary is named by the words it shows.

myst-nb writes `<summary aria-label="Toggle hidden content">` around "Show code cell source":
a name no sighted reader sees (axe-core: label-content-name-mismatch, serious). The browser
tests run axe on every page; this checks the replacement visitor itself.
"""

from __future__ import annotations

from book_pages import load_extension
from myst_nb.sphinx_ import HideCodeCellNode, visit_HideCellInput

A11Y = load_extension("normlab_a11y")


class Writer:
    def __init__(self):
        self.body = []


def rendered(visit) -> str:
    node = HideCodeCellNode(classes=["above-input"], prompt_show="Show code", prompt_hide="Hide")
    writer = Writer()
    visit(writer, node)
    return "".join(writer.body)


def test_the_summary_is_named_by_its_text_and_keeps_the_rest_of_myst_nbs_html():
    ours, theirs = rendered(A11Y.visit_hidden_cell), rendered(visit_HideCellInput)
    assert 'aria-label="Toggle hidden content"' in theirs  # what the extension is for
    assert "aria-label" not in ours
    assert ours == theirs.replace(' aria-label="Toggle hidden content"', "")
