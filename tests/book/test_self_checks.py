"""Every chapter ends with "Check yourself": questions whose answers stay hidden until asked.

The questions are sphinx-exercise `exercise` directives labelled `<stem>-q<n>` (the chapter's file
name without its number, so that a renumbering keeps the labels), each answered by a `solution`
with the `dropdown` class, which sphinx-togglebutton folds. The build test reads the HTML; the
browser test reads each chapter's one visit (tests/site_visit.py): every answer hidden, the
first shown when its title is clicked, and hidden again.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import pytest
from book_pages import html_path, part_files
from site_visit import value

CHAPTERS = part_files("Chapters")
MIN_QUESTIONS = 3

EXERCISE = re.compile(r'<div class="([^"]*\bexercise\b[^"]*)" id="([^"]+)"')
SOLUTION = re.compile(
    r'<div class="([^"]*\bsolution\b[^"]*)"[^>]*>\s*<p class="admonition-title">(.*?)</p>'
    r'\s*<section id="solution-content">(.*?)</section>',
    flags=re.S,
)
GLUED_NUMBER = re.compile(r'<span class="pasted-text">[^<]*\d[^<]*</span>')


def label_stem(chapter: str) -> str:
    """'chapters/01_why_normalize' -> 'why-normalize': the labels' prefix, free of the number."""
    name = PurePosixPath(chapter).name
    return re.sub(r"^\d+_", "", name).replace("_", "-")


def check_section(built_site, chapter: str) -> str:
    html = (built_site / html_path(chapter)).read_text(encoding="utf-8")
    start = html.find('<section id="check-yourself">')
    assert start >= 0, f"{chapter} has no 'Check yourself' section"
    end = html.find("</article>", start)
    return html[start:end]


def test_label_stem_drops_the_number():
    assert label_stem("chapters/01_why_normalize") == "why-normalize"
    assert label_stem("chapters/12_speed") == "speed"


def test_the_toc_lists_the_chapters():
    assert len(CHAPTERS) >= 10, CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_ends_with_questions_each_with_a_hidden_answer(built_site, chapter):
    section = check_section(built_site, chapter)
    assert "<h2" not in section[section.find("</h2>") :], "Check yourself is not the last section"
    labels = [label for classes, label in EXERCISE.findall(section) if "admonition" in classes]
    assert len(labels) >= MIN_QUESTIONS, f"{len(labels)} questions: {labels}"
    stem = label_stem(chapter)
    assert all(re.fullmatch(rf"{re.escape(stem)}-q\d+", label) for label in labels), labels

    solutions = SOLUTION.findall(section)
    answered = {}
    for classes, title, body in solutions:
        assert "dropdown" in classes.split(), f"a solution is not folded: {title}"
        (target,) = re.findall(r'href="#([^"]+)"', title)
        answered[target] = body
    assert sorted(answered) == sorted(labels), f"questions {labels}, answers to {sorted(answered)}"
    assert len(solutions) == len(labels), "a question has more than one answer"
    assert any(GLUED_NUMBER.search(body) for body in answered.values()), (
        "no answer shows a number computed at build (glue)"
    )


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_answers_stay_folded_until_the_reader_opens_one(site_visits, chapter):
    seen = value(site_visits, chapter, "self_checks")
    assert seen["count"] >= MIN_QUESTIONS, f"{seen['count']} answers on the page"
    for i, visible in enumerate(seen["visible_before"]):
        assert not visible, f"answer {i + 1} is visible before it is asked for"
    assert seen["expanded"] == "true"
    assert not seen["second_visible"], "opening one answer opened another"
    assert seen["closed_again"]
