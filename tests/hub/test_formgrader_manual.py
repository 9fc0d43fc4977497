"""Manual Grading in a local formgrader (issue 46, item 1), in Chromium: a hand score that reaches
the gradebook and the export.

nbgrader's formgrader renders a submission with an HTMLExporter of its own (template
`formgrade`); the course's feedback page is `plugins.FeedbackExporter`'s, so the course's
`nbgrader_config.py` leaves that page alone (a course-wide `c.HTMLExporter.template_name` made
it "Sorry, the formgrader encountered an error": TemplateNotFound bootstrap.min.css). A ps6
submission, autograded by plain nbgrader, is opened in the formgrader's Manual Grading as an
instructor opens it from `jupyter server` in the course folder (the command line's root); its
written answer (`decode_one_token`, 5 points by hand) gets 4, which the gradebook keeps and
`python -m normlab.course export` adds to the student's ps6 points.
"""

from __future__ import annotations

import csv
import secrets
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from demo_course import build_course, course_env, released_notebook, write_submission
from nbgrader.api import Gradebook

from normlab.grading import MANUAL

pytestmark = [pytest.mark.slow, pytest.mark.browser]

PS6 = "ps6_stability_speed"
(BY_HAND,) = MANUAL[PS6]  # its written answer, graded by hand
ANSWER = "One token at a time: the norm runs once per token, so its launch cost dominates."
START_S = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course with one ps6 submission (a written answer, no code), autograded by nbgrader."""
    root = build_course(tmp_path_factory.mktemp("manual") / "course", (PS6,))
    nb = released_notebook(root, PS6)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == BY_HAND]
    cell.source = ANSWER
    write_submission(root, "alice", nb, PS6)
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", PS6],
        cwd=root, env=course_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root


@pytest.fixture(scope="module")
def formgrader(course, tmp_path_factory):
    """`jupyter server` in the course folder, nbgrader's extensions on; its URL and token."""
    port, token = free_port(), secrets.token_hex(16)
    config = tmp_path_factory.mktemp("jupyter-config")  # none of this user's own settings
    env = course_env() | {
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(config / "runtime"),
        "NBGRADER_EXCHANGE": str(course.parent / "exchange"),
    }
    log_path = course.parent / "server.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "server", "--no-browser", f"--port={port}",
             "--ServerApp.ip=127.0.0.1", "--ServerApp.allow_root=True",
             f"--IdentityProvider.token={token}"],
            cwd=course, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(log_path.read_text()[-3000:])
                time.sleep(0.5)
        yield url, token
    finally:
        server.terminate()
        server.wait(timeout=30)


def gradebook(course) -> Gradebook:
    return Gradebook(f"sqlite:///{course / 'gradebook.db'}")


def test_a_hand_score_reaches_the_gradebook_and_the_export(course, formgrader, browser_page):
    url, token = formgrader
    with gradebook(course) as gb:
        notebook_id = gb.find_submission_notebook(PS6, PS6, "alice").id
        before = gb.find_submission(PS6, "alice").score  # the autograded cells alone
    page = browser_page.page
    page.context.set_extra_http_headers({"Authorization": f"token {token}"})  # its API calls too
    page.goto(f"{url}/formgrader/submissions/{notebook_id}/")
    # "Sorry, the formgrader encountered an error" has no box; the box is marked as needing a
    # grade once the grades have loaded (formgrade_models.js), and only then does a change save
    score = page.locator(f"input.score.needs_manual_grade#{BY_HAND}")
    score.wait_for(timeout=30_000)
    text = page.locator("body").inner_text()
    assert ANSWER in text and "Sorry" not in text, text[:2000]
    score.fill("4")
    saved = lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT"  # noqa: E731
    with page.expect_response(saved) as answer:
        score.press("Tab")  # the change event saves it (nbgrader's formgrade_models.js)
    assert answer.value.ok, answer.value.status
    with gradebook(course) as gb:
        assert gb.find_grade(BY_HAND, PS6, PS6, "alice").manual_score == 4.0
        after = gb.find_submission(PS6, "alice").score
    assert after == before + 4.0, (before, after)
    out = course.parent / "grades-per-student.csv"
    done = subprocess.run(
        [sys.executable, "-m", "normlab.course", "export", "--out", str(out)],
        cwd=course, env=course_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert float(row[PS6]) == after, row
