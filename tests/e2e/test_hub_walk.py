"""A term's assignment on the course's JupyterHub, walked in a browser (instructors/hub.md).

`make hub-demo` serves the course (the accounts instructor, alice and bob; ps1_by_hand and
ps6_stability_speed released by the demo, ps2_layer_norm released here in the formgrader), then
in Debian's Chromium: the instructor logs in (JupyterLab offers no Formgrader item, which would
show blank) and releases ps2; the formgrader's folder links open; alice and bob log in and
fetch ps2 from the Assignments tab (alice the demo's ps1 too, and ps6, which she submits as it
came), fill it (alice correctly, bob with the sample variance), Validate and Submit; the
instructor collects, autogrades (the course's sandboxed grader behind the formgrader's button,
whose dialog says so), generates and releases feedback, and in Manual Grading gives alice's ps6
written answer 4 points by hand; alice fetches her feedback and sees her ticks; the instructor
exports the grades with `make export` and `make export LMS=canvas` in a terminal. Then, as
alice's Unix account, the course's secrets and bob's work stay out of reach; SIGINT stops the
hub and keeps its state; `make hub-clean` leaves each student's course folders private. Every
step leaves a screenshot in test-artifacts/hub/, with the hub's log and the step times.

It changes local accounts (their passwords, shells and home modes; `make hub-clean` puts them
back), so it runs only where NORMLAB_HUB_WALK=1 and root: CI's .ci/hub-as-users, after the term
page's accounts are done with.
"""

from __future__ import annotations

import csv
import http.client
import io
import json
import os
import pwd
import random
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from demo_course import PS2_ANSWERS
from hub_pages import (
    ACTION_MS,
    PS2,
    assignment_row,
    click_in_row,
    close_dialog,
    formgrader_action,
    formgrader_row,
    log_in,
    open_assignments,
    open_notebook,
    refresh_assignments,
    replace_cell,
    run_in_terminal,
    save,
    show_tab,
    validate,
)
from nbgrader.api import Gradebook

from normlab.grading import MANUAL

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "hub"
HUB_ROOT = Path(os.environ.get("HUB_ROOT", "/srv/layernorm-hub"))
COURSE = HUB_ROOT / "course"
EXCHANGE = HUB_ROOT / "exchange" / "layernorm"
STUDENTS = {"alice": "correct", "bob": "sample_variance"}  # PS2_ANSWERS: bob's misconception
PS6 = "ps6_stability_speed"  # released by the demo: alice hands it in for a grade by hand
(BY_HAND,) = MANUAL[PS6]  # its written answer, graded by hand
WALK_LIMIT_S = 240  # the four minutes, first login to exported grades
START_LIMIT_S = 900  # make hub-demo: its environments may still have to be installed
STOP_LIMIT_S = 60
CLEAN_LIMIT_S = 900  # three venvs and node_modules to remove: minutes on a busy disk

pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.skipif(
        os.environ.get("NORMLAB_HUB_WALK") != "1" or os.geteuid() != 0,
        reason="changes local accounts: runs as root where NORMLAB_HUB_WALK=1 (.ci/hub-as-users)",
    ),
]


def home(user: str) -> Path:
    return Path(pwd.getpwnam(user).pw_dir)


def free_ports(count: int = 3) -> int:
    """A port p with p .. p + count - 1 free: the proxy, its API and the hub. Below the
    kernel's ephemeral range (ip_local_port_range), where every socket bound to port 0 lands,
    a Jupyter kernel's among them: make test's kernels, started while the hub starts, cannot
    take these ports between this choice and the proxy's bind."""
    ephemeral = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    below = min(int(ephemeral[0]), 32768)
    for first in random.sample(range(10000, below - count), 50):
        try:
            for port in range(first, first + count):
                with socket.socket() as other:
                    other.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError(f"no {count} free ports in a row on 127.0.0.1 below {below}")


class Hub:
    """`make hub-demo` in a process group of its own, as a terminal runs it (Ctrl-C = SIGINT)."""

    def __init__(self) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.port = free_ports()
        self.url = f"http://127.0.0.1:{self.port}"
        self.password = secrets.token_urlsafe(12)
        self.log_path = ARTIFACTS / "make-hub-demo.log"
        env = os.environ | {
            "HUB_PORT": str(self.port),
            "HUB_DEMO_PASSWORD": self.password,
            "HUB_DEMO_RELEASES": f"ps1_by_hand {PS6}",  # ps2: the instructor releases it below
        }
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                ["make", "hub-demo"],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]

    def wait_until_up(self) -> None:
        deadline = time.monotonic() + START_LIMIT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"make hub-demo exited ({self.process.returncode}):\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/hub/login", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (OSError, http.client.HTTPException):  # not up, or not yet speaking HTTP
                pass
            time.sleep(1)
        pytest.fail(f"the hub did not answer within {START_LIMIT_S} s:\n{self.log_tail()}")

    def interrupt(self) -> int | None:
        """Ctrl-C: SIGINT to make and the hub; their exit status (None: still running)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            return self.process.wait(timeout=STOP_LIMIT_S)
        except subprocess.TimeoutExpired:
            return None


@pytest.fixture(scope="module")
def hub():
    for student in STUDENTS:
        for leftover in (home(student) / name for name in (PS2, PS6, "ps1_by_hand")):
            if leftover.exists():
                pytest.fail(f"{leftover}: left by an earlier walk (.ci/hub-as-users clears it)")
    running = Hub()
    try:
        running.wait_until_up()
        yield running
    finally:
        if running.interrupt() is None:
            os.killpg(running.process.pid, signal.SIGKILL)
            running.process.wait()


class Steps:
    """Screenshots and times of the walk, numbered, under test-artifacts/hub/."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.times: list[tuple[str, float]] = []

    def shot(self, page, name: str) -> None:
        number = len(self.times) + 1
        page.screenshot(path=str(ARTIFACTS / f"{number:02d}-{name}.png"))
        self.times.append((name, round(time.monotonic() - self.started, 1)))
        (ARTIFACTS / "steps.json").write_text(json.dumps(self.times, indent=1))

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def answer_cells() -> dict[str, int]:
    """{grade_id: cell index} of ps2's answer cells in the released notebook."""
    released = nbformat.read(REPO / "exercises" / PS2 / f"{PS2}.ipynb", as_version=4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: index
        for index, cell in enumerate(released.cells)
        if cell.metadata.get("nbgrader", {}).get("solution")
    }


def as_user(user: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["runuser", "-u", user, "--", *argv], capture_output=True, text=True, timeout=60
    )


def as_alice(*argv: str) -> subprocess.CompletedProcess:
    return as_user("alice", *argv)


def student_works(page, steps: Steps, student: str) -> None:
    """Fetch ps2, fill it with the student's answers, Validate, Submit."""
    open_assignments(page)
    steps.shot(page, f"{student}-assignments")
    if student == "alice":  # the demo's own releases, fetched as a student would
        click_in_row(page, "released", "ps1_by_hand", "Fetch", then="fetched")
        assert (home(student) / "ps1_by_hand" / "ps1_by_hand.ipynb").is_file()
        click_in_row(page, "released", PS6, "Fetch", then="fetched")
        click_in_row(page, "fetched", PS6, "Submit", then="submitted")  # as it came
    click_in_row(page, "released", PS2, "Fetch", then="fetched")
    panel = open_notebook(page, PS2)
    answers = PS2_ANSWERS[STUDENTS[student]]
    for grade_id, index in answer_cells().items():
        replace_cell(page, panel, index, answers[grade_id])
    save(page, panel)
    saved = nbformat.read(home(student) / PS2 / f"{PS2}.ipynb", as_version=4)
    for grade_id, index in answer_cells().items():
        assert saved.cells[index].source == answers[grade_id], f"{student}'s {grade_id} unsaved"
    result = validate(page, panel)
    steps.shot(page, f"{student}-validate")
    if STUDENTS[student] == "correct":
        assert "Success! Your notebook passes all the tests." in result, result
    else:
        assert "Success!" not in result and "population variance" in result, result
    close_dialog(page)
    show_tab(page, "Assignments")
    refresh_assignments(page)
    click_in_row(page, "fetched", PS2, "Submit", then="submitted")
    steps.shot(page, f"{student}-submitted")


def instructor_grades(page, hub: Hub, steps: Steps) -> None:
    """Collect, autograde each submission, generate and release the feedback."""
    page.goto(f"{hub.url}/user/instructor/formgrader/manage_assignments")
    formgrader_action(page, formgrader_row(page, PS2), "collect")
    page.goto(f"{hub.url}/user/instructor/formgrader/manage_submissions/{PS2}")
    for student in STUDENTS:
        said = formgrader_action(page, formgrader_row(page, student), "autograde")
        assert f"{PS2}: sandboxed grader, strict isolation" in said, said
    scores = {s: formgrader_row(page, s).locator("td.score").inner_text() for s in STUDENTS}
    steps.shot(page, "instructor-autograded")
    assert scores["alice"] == "25 / 25", scores
    assert scores["bob"] != "25 / 25", scores
    for student in STUDENTS:  # the course's sandboxed grader wrote its record of each notebook
        record = COURSE / "reports" / PS2 / "records" / student / f"{PS2}.json"
        assert json.loads(record.read_text())["isolation"] == "strict", record
    page.goto(f"{hub.url}/user/instructor/formgrader/manage_assignments")
    formgrader_action(page, formgrader_row(page, PS2), "generate-feedback")
    formgrader_action(page, formgrader_row(page, PS2), "release-feedback")
    steps.shot(page, "instructor-feedback-released")


def instructor_grades_by_hand(page, hub: Hub, steps: Steps) -> None:
    """Collect and autograde alice's ps6; in Manual Grading, 4 points for its written answer."""
    page.goto(f"{hub.url}/user/instructor/formgrader/manage_assignments")
    formgrader_action(page, formgrader_row(page, PS6), "collect")
    page.goto(f"{hub.url}/user/instructor/formgrader/manage_submissions/{PS6}")
    formgrader_action(page, formgrader_row(page, "alice"), "autograde")
    page.goto(f"{hub.url}/user/instructor/formgrader/gradebook/{PS6}/{PS6}")
    page.locator("tbody tr td a", has_text="Submission").first.click()  # Manual Grading
    score = page.locator(f"input.score#{BY_HAND}")
    score.wait_for(timeout=ACTION_MS)  # the page that crashed before (issue 46)
    # a change saves once the grades have loaded (formgrade_models.js binds the box then): a
    # score typed before is lost. The untouched answer is nbgrader's 0, overridden by hand
    page.wait_for_load_state("networkidle")
    score.fill("4")
    saved = lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT"  # noqa: E731
    with page.expect_response(saved) as answer:
        score.press("Tab")  # the change event saves it (nbgrader's formgrade_models.js)
    assert answer.value.ok, answer.value.status
    steps.shot(page, "instructor-manual-grading")


def folder_links_open(page, hub: Hub) -> None:
    """The formgrader's links to an assignment's source and to its Preview (both /tree/...,
    nbgrader #1794) reach the instructor's own server, not JupyterHub's 404."""
    page.goto(f"{hub.url}/user/instructor/formgrader/manage_assignments")
    row = formgrader_row(page, PS2)
    for column in ("name", "preview"):
        href = row.locator(f"td.{column} a").first.get_attribute("href")
        answer = page.request.get(f"{hub.url}{href}")
        assert answer.ok and "/user/instructor/tree/" in answer.url, (column, href, answer.url)


def lab_offers_no_blank_formgrader(page) -> None:
    """JupyterLab's Nbgrader menu has no Formgrader (it shows blank in a frame on this hub)."""
    page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    assert "Formgrader" not in items and items, items


def student_reads_feedback(page, steps: Steps, student: str) -> str:
    """Fetch Feedback in the Assignments tab, open the page; return its text."""
    show_tab(page, "Assignments")
    refresh_assignments(page)
    assignment_row(page, "submitted", PS2).locator("button:text-is('Fetch Feedback')").click()
    view = page.locator("#submitted_assignments_list a", has_text="(view feedback)")
    view.wait_for()
    view.click()
    page.locator(".jp-DirListing-item", has_text=f"{PS2}.html").dblclick()
    frame = page.frame_locator(".jp-HTMLViewer iframe")
    frame.locator("body").wait_for()
    text = frame.locator("body").inner_text()
    steps.shot(page, f"{student}-feedback")
    return text


def test_a_term_on_the_hub(hub, new_context):
    """The walk: release, fetch, validate, submit, collect, autograde, feedback, export."""
    steps = Steps()
    contexts = {
        user: new_context(viewport={"width": 1280, "height": 900})
        for user in ("instructor", *STUDENTS)
    }
    instructor = log_in(contexts["instructor"], hub.url, "instructor", hub.password)
    steps.shot(instructor, "instructor-lab")
    lab_offers_no_blank_formgrader(instructor)
    formgrader = contexts["instructor"].new_page()  # the formgrader in its own tab
    formgrader.goto(f"{hub.url}/user/instructor/formgrader/manage_assignments")
    formgrader_action(formgrader, formgrader_row(formgrader, PS2), "assign")
    formgrader_action(formgrader, formgrader_row(formgrader, PS2), "release")
    formgrader_row(formgrader, PS2).locator("td.status", has_text="released").wait_for()
    steps.shot(formgrader, "instructor-released")
    folder_links_open(formgrader, hub)

    students = {}
    for student in STUDENTS:
        students[student] = log_in(contexts[student], hub.url, student, hub.password)
        student_works(students[student], steps, student)
    instructor_grades(formgrader, hub, steps)
    instructor_grades_by_hand(formgrader, hub, steps)

    feedback = student_reads_feedback(students["alice"], steps, "alice")
    crosses = [line for line in feedback.splitlines() if line.startswith("✗")]
    assert "ps2_layer_norm: 25 of 25 points" in feedback and not crosses, feedback[:3000]
    assert "Graded: 14 of 14 checks passed" in feedback, feedback[-3000:]
    assert sum(line.startswith("✓") for line in feedback.splitlines()) >= 14, feedback[:3000]
    student_reads_feedback(students["bob"], steps, "bob")
    alice = students["alice"].request
    assert alice.get(f"{hub.url}/user/alice/formgrader").status == 404  # not in her server
    instructors = alice.get(f"{hub.url}/user/instructor/api/contents/gradebook.db")
    assert instructors.status == 403, (instructors.status, instructors.url)

    canvas = COURSE / "grades-canvas.csv"
    run_in_terminal(instructor, "make export && make export LMS=canvas", done=canvas.exists)
    time.sleep(1)  # the terminal's last lines, for the screenshot
    steps.shot(instructor, "instructor-export")
    grades = {}
    for name in ("grades-per-student.csv", canvas.name):
        answer = instructor.request.get(f"{hub.url}/user/instructor/files/{name}")
        assert answer.ok, (name, answer.status)
        (ARTIFACTS / name).write_text(answer.text())
        grades[name] = list(csv.DictReader(io.StringIO(answer.text())))
    rows = {row["student_id"]: row for row in grades["grades-per-student.csv"]}
    assert float(rows["alice"][PS2]) == 25.0, rows
    assert float(rows["bob"][PS2]) < 25.0, rows
    with Gradebook(f"sqlite:///{COURSE / 'gradebook.db'}") as gb:  # the hand score is in it
        assert gb.find_grade(BY_HAND, PS6, PS6, "alice").manual_score == 4.0
        alice_ps6 = gb.find_submission(PS6, "alice").score
    assert float(rows["alice"][PS6]) == alice_ps6 >= 4.0, rows["alice"]
    canvas_rows = {row["SIS Login ID"]: row for row in grades[canvas.name]}
    assert float(canvas_rows["alice"][PS6]) == alice_ps6, canvas_rows
    assert canvas_rows[""]["Student"] == "Points Possible" and "total" not in canvas_rows[""]
    walk_s = steps.elapsed()
    (ARTIFACTS / "walk-seconds.txt").write_text(f"{walk_s:.1f}\n")
    for context in contexts.values():
        context.close()
    assert walk_s <= WALK_LIMIT_S, f"the walk took {walk_s:.0f} s (steps.json says where)"


def test_alice_reaches_no_secret(hub):
    """As alice's account: no solutions, gradebook, inbound listing, or bob's feedback."""
    secrets_ = {
        "the solutions": ["cat", str(COURSE / "solutions" / PS2 / f"{PS2}.ipynb")],
        "the gradebook": ["cat", str(COURSE / "gradebook.db")],
        "the exchange's inbound": ["ls", str(EXCHANGE / "inbound")],
        "the exchange's feedback": ["ls", str(EXCHANGE / "feedback")],
        "the course's feedback": ["ls", str(COURSE / "feedback")],
    }
    bobs = sorted((home("bob") / PS2 / "feedback").glob(f"*/{PS2}.html"))
    assert bobs, "bob fetched no feedback (the walk above fetches it)"
    secrets_["bob's fetched feedback"] = ["cat", str(bobs[0])]
    for what, argv in secrets_.items():
        done = as_alice(*argv)
        assert done.returncode != 0 and "Permission denied" in done.stderr, (what, done)


def test_each_environment_holds_what_it_should(hub):
    """The students' kernel has the student download, the hub's venv no normlab at all."""
    kernel = as_alice(
        str(HUB_ROOT / "student-kernel/bin/python"),
        "-c",
        "import normlab, normlab.grading; print(normlab.__file__)",
    )
    assert kernel.returncode == 0 and "student-kernel" in kernel.stdout, kernel
    reference = as_alice(
        str(HUB_ROOT / "student-kernel/bin/python"), "-c", "import normlab.answer_key.trusted"
    )
    assert "No module named 'normlab.answer_key'" in reference.stderr, reference
    hub_venv = as_alice(str(HUB_ROOT / "hub-venv/bin/python"), "-c", "import normlab")
    assert "No module named 'normlab'" in hub_venv.stderr, hub_venv
    instructor = subprocess.run(
        ["runuser", "-u", "instructor", "--", str(COURSE / ".venv/bin/python"), "-c",
         "import normlab.answer_key.trusted"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert instructor.returncode == 0, instructor


def test_sigint_stops_the_hub_and_keeps_its_state(hub):
    """Ctrl-C: make and the hub exit, no user's server is left, the state stays."""
    status = hub.interrupt()
    assert status is not None, f"still running {STOP_LIMIT_S} s after SIGINT"
    servers = subprocess.run(["pgrep", "-f", "jupyterhub-singleuser"], capture_output=True)
    left = [
        line
        for line in subprocess.run(
            ["ps", "-o", "user=,args=", "-p", ",".join(servers.stdout.decode().split()) or "0"],
            capture_output=True,
            text=True,
        ).stdout.splitlines()
        if line.split()[0] in ("instructor", *STUDENTS)
    ]
    assert not left, left
    for kept in (
        HUB_ROOT / "state" / "jupyterhub.sqlite",
        COURSE / "gradebook.db",
        EXCHANGE / "outbound" / PS2,
        home("alice") / PS2 / f"{PS2}.ipynb",
    ):
        assert kept.exists(), kept


def test_hub_clean_leaves_each_students_work_private(hub):
    """make hub-clean: an account made for the hub goes with its home; one that existed before
    gets its home's mode back, and its course folders stay its own, private: bob reads none of
    alice's answers (a home given back 755 showed them)."""
    assert hub.interrupt() is not None  # stopped (the test above), or stopped now
    accounts = (HUB_ROOT / "state" / "accounts.tsv").read_text().splitlines()
    how = {line.split("\t")[0]: line.split("\t") for line in accounts}
    homes = {student: home(student) for student in STUDENTS}
    answers = homes["alice"] / PS2 / f"{PS2}.ipynb"
    done = subprocess.run(
        ["make", "hub-clean"], cwd=REPO, env=os.environ | {"HUB_ROOT": str(HUB_ROOT)},
        capture_output=True, text=True, timeout=CLEAN_LIMIT_S,
    )  # fmt: skip
    (ARTIFACTS / "make-hub-clean.log").write_text(done.stdout + done.stderr)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not HUB_ROOT.exists()
    for student, folder in homes.items():
        if how[student][1] == "made":
            assert not folder.exists(), folder
            continue
        assert f"{folder.stat().st_mode & 0o777:o}" == how[student][3], (student, how[student])
        assert (folder / PS2).stat().st_mode & 0o077 == 0, f"{folder / PS2} is not private"
    if how["alice"][1] == "reused":
        assert as_user("alice", "cat", str(answers)).returncode == 0  # still hers
        bob = as_user("bob", "cat", str(answers))
        assert bob.returncode != 0 and "Permission denied" in bob.stderr, bob
