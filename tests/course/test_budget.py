"""The notebook's budget: a submission whose every cell stays under the cell timeout but
which together would run on and on is stopped at `c.SandboxExecute.notebook_budget`."""

from __future__ import annotations

import json

import pytest
from demo_course import PS2, PS2_ANSWERS, build_course, submit
from security_course import CONFIG_EXTRA, TIMEOUT_S, Graded, run_grader

from normlab.course.grader import run_record

pytestmark = [pytest.mark.slow, pytest.mark.kernels]
BUDGET_S = 8
NAP = f"import time\ntime.sleep({TIMEOUT_S - 1})\n"  # under the cell timeout, each time
MARGIN_S = 15.0


@pytest.fixture(scope="module")
def budget_course(tmp_path_factory) -> Graded:
    config = CONFIG_EXTRA + f"c.SandboxExecute.notebook_budget = {BUDGET_S}\n"
    course = build_course(tmp_path_factory.mktemp("budget") / "course", config_extra=config)
    submit(course, "sleepy", PS2_ANSWERS["correct"], prepend=[NAP] * 4)
    submit(course, "prompt", PS2_ANSWERS["correct"])
    seconds, output = run_grader(course)
    return Graded(course, seconds, output)


def test_cells_past_the_budget_are_not_run_and_say_why(budget_course):
    record = budget_course.record("sleepy")
    stopped = [c for c in record["cells"] if c["grade_id"] and c["status"] == "not run"]
    assert stopped and all("its 8 s budget" in c["message"] for c in stopped), record
    assert budget_course.total("sleepy") < 25.0
    assert budget_course.total("prompt") == 25.0  # the budget costs an honest notebook nothing


def test_the_budget_bounds_the_notebooks_time(budget_course):
    runs = json.loads(run_record(budget_course.root, PS2).read_text())["students"]
    seconds = next(s["seconds"] for s in runs if s["student"] == "sleepy")
    assert seconds <= BUDGET_S + MARGIN_S
