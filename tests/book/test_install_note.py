"""Pages that show code running `normlab` say that it needs the course's install (issue 32).

The note is written once, in _ext/normlab_install_note.py, and the extension puts it under the
title of every page whose source imports normlab and shows a code cell. The fast tests check the
rule on made-up sources; the slow one checks every page of the built book against it.
"""

from __future__ import annotations

import pytest
from book_pages import REPO, html_path, load_extension, toc_files

NOTE = load_extension("normlab_install_note")

SHOWN = """---
jupytext:
  text_representation:
    format_name: myst
---

# A chapter

```{code-cell} ipython3
:tags: [remove-cell]

import normlab
```

Some prose.

```{code-cell} ipython3
# a comment, not a title
normlab.layer_norm([1.0, 2.0])
```
"""


def test_a_page_that_imports_normlab_and_shows_a_cell_gets_the_note_under_its_title():
    assert NOTE.shows_normlab_code(SHOWN)
    noted = NOTE.with_note(SHOWN)
    title = noted.index("# A chapter")
    assert noted.index("{admonition} Running this page's code") > title
    assert noted.index("{admonition}") < noted.index("Some prose.")
    assert noted.count("Running this page's code") == 1
    assert noted.replace(NOTE.NOTE, "") == SHOWN  # nothing else changes


def test_a_page_that_shows_no_code_or_imports_no_normlab_gets_none():
    hidden = SHOWN.replace(
        "```{code-cell} ipython3\n# a", "```{code-cell} ipython3\n:tags: [remove-input]\n# a"
    )
    assert not NOTE.shows_normlab_code(hidden)
    assert not NOTE.shows_normlab_code(SHOWN.replace("import normlab", "import numpy"))
    assert not NOTE.shows_normlab_code("# Intro\n\nNo code here; normlab is mentioned.\n")
    assert NOTE.with_note("No title at all.\n") == "No title at all.\n"


@pytest.mark.slow
@pytest.mark.parametrize("toc_file", toc_files())
def test_every_built_page_has_the_note_exactly_when_its_code_runs_normlab(built_site, toc_file):
    source = REPO / f"{toc_file}.md"
    expected = source.is_file() and NOTE.shows_normlab_code(source.read_text())
    html = (built_site / html_path(toc_file)).read_text(encoding="utf-8")
    assert (NOTE.MARK in html) is expected
    if expected:  # under the title, before the page's first code cell
        assert html.index("<h1") < html.index(NOTE.MARK) < html.find('class="cell')
