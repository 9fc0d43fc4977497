"""Nothing private is published (issue 44, item 17): no file of the built site, and no file
inside an archive the site offers (the student wheel, the bundle), names a private path.

Private: the instructor's source notebooks (`solutions/`, with their answers and hidden tests),
the grader's answer key (a path into `normlab/answer_key/`), and the checkout the book was built
from (its place on this disk). The shipped checks may name the answer key's modules
(`normlab.answer_key.batteries`) to say what a full install has that the download lacks; they
name no file of it. The Instructors part is the one exception for `solutions/`: its pages tell
an instructor where their own source notebooks live. A list of the files a build read (the one
`make student` keeps to know when to make the download again) once landed at the site's root,
which is what this test was written against.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from book_pages import REPO

# where a page of the Instructors part is published: its HTML, its source, its notebook
INSTRUCTORS = ("instructors/", "_sources/instructors/", "_images/instructors")
ARCHIVES = (".zip", ".whl")


def private_names() -> dict[str, re.Pattern]:
    """What a published file must not name, by the reason it is private."""
    checkouts = {re.escape(str(p)) for p in (REPO, REPO.resolve())}
    return {
        "the checkout's place on disk": re.compile("|".join(sorted(checkouts))),
        # a path into it; the wheel's checks may say that a module of that name exists
        "the answer key": re.compile(r"answer_key[/\\]"),
        "the source notebooks": re.compile(r"(?<![\w.])solutions/"),
    }


def published(site: Path):
    """(name, text) of every file of the site and of every member of its archives."""
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        name = path.relative_to(site).as_posix()
        data = path.read_bytes()
        yield name, data.decode("latin-1")
        if path.suffix in ARCHIVES:
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    yield f"{name}!{member}", archive.read(member).decode("latin-1")
                    if member.endswith(ARCHIVES):  # the wheel inside the bundle
                        with zipfile.ZipFile(archive.open(member)) as inner:
                            for part in inner.namelist():
                                text = inner.read(part).decode("latin-1")
                                yield f"{name}!{member}!{part}", text


def findings(site: Path) -> list[str]:
    """'file: what it names (the words around it)' for every private name found."""
    found = []
    for name, text in published(site):
        for reason, pattern in private_names().items():
            if reason == "the source notebooks" and name.startswith(INSTRUCTORS):
                continue
            for hit in pattern.finditer(text):
                around = text[max(hit.start() - 40, 0) : hit.end() + 40].replace("\n", " ")
                found.append(f"{name}: {reason} ({around!r})")
                break
    return found


@pytest.mark.slow
def test_no_published_file_names_a_private_path(built_site):
    """Every file of `_build/html`, and inside its zip and wheel, is read whole."""
    found = findings(built_site)
    assert not found, "\n".join(found)


def test_the_check_finds_a_private_path_where_one_is_published(tmp_path):
    """The check itself: a list of inputs at the root, a wheel naming the answer key, a page
    naming the checkout, are all found; the instructors' page naming solutions/ is not."""
    (tmp_path / "inputs.txt").write_text("exercises/a.ipynb solutions/ps2/ps2.ipynb\n")
    with zipfile.ZipFile(tmp_path / "normlab-0.whl", "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr("normlab/RECORD", "normlab/answer_key/reference.py,sha256=x,1\n")
    (tmp_path / "page.html").write_text(f"<p>built in {REPO}/chapters</p>")
    (tmp_path / "instructors").mkdir()
    (tmp_path / "instructors" / "workflow.html").write_text("<p>edit solutions/ps2/</p>")
    found = findings(tmp_path)
    assert [line.split(":")[0] for line in found] == [
        "inputs.txt",
        "normlab-0.whl!normlab/RECORD",
        "page.html",
    ]
