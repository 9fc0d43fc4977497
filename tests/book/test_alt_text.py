"""A figure's alt text states results only through glued values (issue 23, item 6).

A screen reader's user gets a figure's results from its alt text, which is plain text in the
cell's metadata, written by hand. So every number in it must be one of two kinds:

- **setup**, written in the figure's caption or in the figure's own code (600 steps, seeds 0 to 2,
  layers 1 to 6, the record [1, 2, 3, 4]), or 0 and 1;
- **a result**, equal at the precision it is written to (2.5, 1.34, 99.8%, 1,555) to a value that
  the same page glues, so the build that computes the value also checks the words.

The fast tests check the rule on made-up cases; the slow test reads every page's alt texts and
the glue the build recorded (`_build/jupyter_execute/<page>.glue.json`).
"""

from __future__ import annotations

import ast
import json
import math
import re

import jupytext
import pytest
from book_pages import REPO, toc_files
from numbers_in_text import numbers

EXECUTED = REPO / "_build" / "jupyter_execute"
ALWAYS_SETUP = {0.0, 1.0, -1.0}


def glued_values(glue: dict) -> list[float]:
    """Every number a page glued: scalars, and the numbers inside glued strings and lists."""
    values = []
    for output in glue.values():
        text = output.get("data", {}).get("text/plain")
        if text is None:
            continue
        text = re.sub(r"np\.\w+\(([^()]*)\)", r"\1", text)  # np.float64(0.5) -> 0.5
        try:
            literal = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            literal = None
        if isinstance(literal, bool):
            continue
        if isinstance(literal, int | float):
            values.append(float(literal))
        else:
            values += [value for _, value, _, _ in numbers(text.strip("'\""))]
    return values


def matches(value: float, percent: bool, decimals: int | None, glued: float) -> bool:
    """Does `glued`, written as the alt text writes `value`, read the same?"""
    scaled = 100 * glued if percent else glued
    for candidate in (scaled, abs(scaled)):
        if decimals is None:  # 1e-6: one written significant figure and its exponent
            if candidate != 0 and math.isclose(float(f"{candidate:.0e}"), value, rel_tol=1e-9):
                return True
        elif math.isclose(round(candidate, decimals), value, rel_tol=1e-9, abs_tol=1e-12):
            return True
    return False


def unexplained(alt: str, setup_text: str, glued: list[float]) -> list[str]:
    """The numbers of `alt` that are neither setup nor a glued result."""
    setup = {value for _, value, _, _ in numbers(setup_text)} | ALWAYS_SETUP
    return [
        written
        for written, value, percent, decimals in numbers(alt)
        if not (value in setup and not percent)
        and not any(matches(value, percent, decimals, g) for g in glued)
    ]


def figures_of(page) -> list[dict]:
    """Every figure cell of a MyST notebook: its alt text, caption and code."""
    found = []
    for cell in jupytext.read(page).cells:
        options = cell.metadata.get("mystnb", {})
        alt = options.get("image", {}).get("alt")
        if alt:
            found.append(
                {
                    "alt": alt,
                    "caption": options.get("figure", {}).get("caption", ""),
                    "code": cell.source,
                }
            )
    return found


def notebook_pages() -> list[str]:
    return [
        f
        for f in toc_files()
        if (REPO / f"{f}.md").is_file() and "jupytext" in (REPO / f"{f}.md").read_text()[:200]
    ]


# -- the rule, on made-up cases --------------------------------------------------------------


def test_numbers_are_read_as_written():
    text = "float32 at 1e-3, 99.8% and 1,555 GB/s; -1.34 to 1.34 (3-D, A100, 4096³, 2^4)"
    assert [(w, v, p, d) for w, v, p, d in numbers(text)] == [
        ("1e-3", 1e-3, False, None),
        ("99.8%", 99.8, True, 1),
        ("1,555", 1555.0, False, 0),
        ("-1.34", -1.34, False, 2),
        ("1.34", 1.34, False, 2),
    ]


def test_a_result_must_be_glued_and_setup_must_be_in_the_caption():
    glued = glued_values(
        {
            "mu": {"data": {"text/plain": "2.5"}},
            "share": {"data": {"text/plain": "np.float64(0.998)"}},
            "list": {"data": {"text/plain": "'0.42, 0.91 and 0.52'"}},
            "flag": {"data": {"text/plain": "True"}},
        }
    )
    assert glued == [2.5, 0.998, 0.42, 0.91, 0.52]
    caption = "600 steps, seeds 0, 1 and 2"
    assert unexplained("after 600 steps the mean is 2.5 and 99.8% right", caption, glued) == []
    assert unexplained("torch reaches 0.91 of the copy", caption, glued) == []
    assert unexplained("the mean is 2.6", caption, glued) == ["2.6"]
    assert unexplained("after 700 steps", caption, glued) == ["700"]
    assert unexplained("about 99.9% right", caption, glued) == ["99.9%"]


# -- every page of the built book -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("toc_file", notebook_pages())
def test_every_number_in_an_alt_text_is_setup_or_a_glued_result(built_site, toc_file):
    glue_file = EXECUTED / f"{toc_file}.glue.json"
    glued = glued_values(json.loads(glue_file.read_text())) if glue_file.is_file() else []
    problems = {
        fig["alt"][:60]: bad
        for fig in figures_of(REPO / f"{toc_file}.md")
        if (bad := unexplained(fig["alt"], fig["caption"] + "\n" + fig["code"], glued))
    }
    assert not problems, f"alt-text numbers that are neither setup nor glued: {problems}"
