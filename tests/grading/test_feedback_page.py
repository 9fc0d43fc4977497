"""The feedback page a student reads (normlab.course.plugins), in Chromium, as
`release_feedback` hands it out: the one HTML file, alone in a folder.

At 1280 px and at a phone's 390 px: no message scrolls sideways and the page does not either;
the maths is drawn (MathML, no `$` left); the page asks for nothing but itself; the header
names every graded cell with a tick or a cross and its points; a failed check says whether
its evidence is a visible or a hidden input; the summary cell gives the graded count.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from course_helpers import nbgrader
from mutants import witness_students

from normlab.grading import CHECKS
from normlab.grading.verdict import HIDDEN_LABEL

PS2 = "ps2_layer_norm"
FAILING = witness_students(PS2)  # each fails some check of ps2
STUDENTS = ["honest", "blank", *FAILING]
WIDTHS = (1280, 390)


@pytest.fixture(scope="module")
def pages(graded_course, tmp_path_factory) -> dict:
    """student -> a folder holding only that student's feedback page."""
    nbgrader(graded_course.root, "generate_feedback", PS2, "--force")
    found = {}
    for student in STUDENTS:
        folder = tmp_path_factory.mktemp(f"feedback-{student}")
        page = graded_course.root / "feedback" / student / PS2 / f"{PS2}.html"
        shutil.copy(page, folder / "index.html")
        found[student] = folder
    return found


def measure(page) -> dict:
    return page.evaluate(
        """() => ({
            wide: [...document.querySelectorAll('div.output_area pre, div.output_subarea')]
                .filter(e => e.scrollWidth > e.clientWidth + 1)
                .map(e => e.textContent.slice(0, 80)),
            pageScroll: document.documentElement.scrollWidth - window.innerWidth,
            maths: document.querySelectorAll('math').length,
            rawTex: /\\$[^$]*\\\\[a-z]+/.test(document.body.innerText),
            marks: [...document.querySelectorAll('ul.marks li')].map(li => li.innerText),
            errors: [...document.querySelectorAll('div.output_error pre')].map(e => e.innerText),
            text: document.body.innerText,
        })"""
    )


def mark_line(marks: list[str], grade_id: str) -> str:
    """The header's line for `grade_id`: a tick or a cross, then the name."""
    (line,) = [m for m in marks if re.match(rf"[✓✗]\s*{grade_id}:", m)]
    return line


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("student", ["honest", "blank", *FAILING[:3]])
def test_a_page_reads_alone_at_any_width(pages, serve_folder, browser_page, student, width):
    requests = []
    browser_page.page.on("request", lambda request: requests.append(request.url))
    browser_page.page.set_viewport_size({"width": width, "height": 900})
    with serve_folder(pages[student]) as url:
        browser_page.goto(url + "index.html")
        seen = measure(browser_page.page)
        browser_page.screenshot(f"feedback-{student}-{width}")
    assert browser_page.problems() == []
    assert requests == [url + "index.html"], "the page asked for more than itself"
    assert seen["wide"] == [], f"messages that scroll sideways: {seen['wide']}"
    assert seen["pageScroll"] <= 0
    assert seen["maths"] > 0 and not seen["rawTex"]


def test_the_header_names_every_check_with_its_mark_and_points(pages, serve_folder, browser_page):
    with serve_folder(pages["honest"]) as url:
        browser_page.goto(url + "index.html")
        honest = measure(browser_page.page)
    with serve_folder(pages["blank"]) as url:
        browser_page.goto(url + "index.html")
        blank = measure(browser_page.page)
    for grade_id, spec in CHECKS[PS2].items():
        line = mark_line(honest["marks"], grade_id)
        assert line.startswith("✓") and spec.summary in line
        assert f"({spec.points:g} of {spec.points:g} point" in line
        line = mark_line(blank["marks"], grade_id)
        assert line.startswith("✗") and f"(0 of {spec.points:g} point" in line
    assert "Graded: 14 of 14 checks passed" in honest["text"]
    assert "Graded: 0 of 14 checks passed" in blank["text"]
    assert "while grading, checks run in the grader" not in honest["text"] + blank["text"]


def test_a_failed_message_says_which_input_showed_it(pages, serve_folder, browser_page):
    labels = []
    for student in FAILING:
        with serve_folder(pages[student]) as url:
            browser_page.goto(url + "index.html")
            labels += [
                re.split(r":", e, maxsplit=1)[0] for e in measure(browser_page.page)["errors"]
            ]
    assert labels, "the witnesses fail no check"
    allowed = {"On an input of the visible check", HIDDEN_LABEL.rstrip(": ")}
    assert set(labels) <= allowed, set(labels) - allowed


@pytest.mark.slow
def test_a_failed_check_shows_one_message(graded_course):
    """nbgrader adds the kernel's reply as a second error output when no output bears its name:
    a failed check's output and reply must both say AssertionError."""
    graded = graded_course.root / "autograded"
    twice = []
    for notebook in sorted(graded.glob(f"*/{PS2}/{PS2}.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            errors = [o for o in cell.get("outputs", []) if o["output_type"] == "error"]
            if len(errors) > 1:
                student = notebook.parent.parent.name
                twice.append((student, cell["id"], [e["ename"] for e in errors]))
    assert not twice, twice
