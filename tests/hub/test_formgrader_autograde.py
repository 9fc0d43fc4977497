"""The formgrader on the hub grades with the course's sandboxed grader, says so, and gives the
course's feedback page (hub/config/instructor).

The hub gives the instructor's server a nbgrader config of its own: the course's config, with
`SandboxExecute` in place of nbgrader's Execute, every step named by its import path (the
formgrader shows the config as JSON, where a class is a blank). The course's config gives
feedback to `plugins.FeedbackExporter`, whose template the formgrader's "feedback" does not
replace. This calls nbgrader's own API as the formgrader's Autograde and Generate Feedback
buttons do (`NbGraderAPI`, config loaded by nbgrader from JUPYTER_CONFIG_PATH and the course
folder), with no hub and no browser, and checks that each notebook ran in a strict sandbox
kernel (the grader's record says so, and the log the formgrader shows), scored what
`python -m normlab.course grade` gives it, and got the course's feedback page.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from demo_course import PS2, PS2_ANSWERS, REPO, build_course, course_env, submit
from nbgrader.api import Gradebook

from normlab.course.grader.execute import SandboxExecute

pytestmark = [pytest.mark.slow, pytest.mark.kernels]

STUDENTS = {"alice": "correct", "bob": "sample_variance"}

# what the formgrader's Autograde and Generate Feedback buttons do (its handlers' `api`:
# nbgrader/server_extensions/formgrader/base.py)
FORMGRADER = """
import json, sys
from nbgrader.apps.api import NbGraderAPI
from nbgrader.apps.baseapp import NbGrader
from nbgrader.coursedir import CourseDirectory
app = NbGrader()
app.load_config_file()
api = NbGraderAPI(CourseDirectory(parent=app), parent=app)
steps = list(app.config.Autograde.autograde_preprocessors)
results = {student: api.autograde(sys.argv[1], student) for student in sys.argv[2:]}
results["feedback"] = api.generate_feedback(sys.argv[1])
print(json.dumps({"steps": steps, "results": results}))
"""


def test_the_formgrader_grades_in_the_sandbox_and_gives_the_courses_feedback(tmp_path):
    course = build_course(tmp_path / "course")
    for student, answers in STUDENTS.items():
        submit(course, student, PS2_ANSWERS[answers])
    env = course_env() | {
        "JUPYTER_CONFIG_PATH": str(REPO / "hub" / "config" / "instructor"),
        "LAYERNORM_COURSE": str(course),
        "NBGRADER_EXCHANGE": str(tmp_path / "exchange"),
    }
    done = subprocess.run(
        [sys.executable, "-c", FORMGRADER, PS2, *STUDENTS],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.splitlines()[-1])
    sandbox = f"{SandboxExecute.__module__}.{SandboxExecute.__name__}"
    assert sandbox in answer["steps"] and all(isinstance(s, str) for s in answer["steps"])
    for action, result in answer["results"].items():
        assert result["success"], f"{action}:\n{result.get('log')}\n{result.get('error')}"
    for student in STUDENTS:  # the formgrader shows the log in its Autograde dialog
        said = answer["results"][student]["log"]
        assert f"{PS2}: sandboxed grader, strict isolation" in said, said
    for student in STUDENTS:
        record = course / "reports" / PS2 / "records" / student / f"{PS2}.json"
        assert json.loads(record.read_text())["isolation"] == "strict", record
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {s: gradebook.find_submission(PS2, s).score for s in STUDENTS}
    assert scores == {"alice": 25.0, "bob": 21.0}, scores
    page = (course / "feedback" / "alice" / PS2 / f"{PS2}.html").read_text()
    assert "ps2_layer_norm: 25 of 25 points" in page  # the course's header, not nbgrader's page
