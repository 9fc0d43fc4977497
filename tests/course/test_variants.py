"""Each student's own ps1 (issue 30), through both graders: every notebook is graded against its
submitter's variant, whatever its STUDENT line says, and the course's sandboxed grader and plain
`nbgrader autograde` (whose kernel finds the submitter from autograded/<student>/) agree.

The class: alice and bob answer with code (right for anyone's numbers); carol types her own
numbers; dave types carol's right numbers (he loses what differs); erin writes code but her
STUDENT line names alice (graded as erin, and told so); frank leaves STUDENT empty.
"""

from __future__ import annotations

import csv
import shutil

import nbformat
import pytest
from demo_course import build_course, released_notebook, write_submission
from security_course import CONFIG_EXTRA, gradebook_scores, normlab_course, run_nbgrader_autograde

from normlab.course.variant import describe
from normlab.grading import CHECKS

pytestmark = [pytest.mark.slow, pytest.mark.kernels]

PS1 = "ps1_by_hand"
FULL = sum(spec.points for spec in CHECKS[PS1].values())
AS_CODE = {  # right for every variant
    "stats_answer": "mean_r = r.mean()\nvar_r = r.var()",
    "normalized_answer": "normalized_r = (r - r.mean()) / r.std()\n"
    "normalized_r_eps = (r - r.mean()) / np.sqrt(r.var() + 1e-5)",
    "params_answer": "params_gain_bias = 2 * d_model\nparams_gain_only = d_model\n"
    "params_rms = d_model",
}


def typed(student: str) -> dict[str, str]:
    """`student`'s right answers typed as numbers (as the course's solution computes them)."""
    a = describe(PS1, student)["answers"]
    return {
        "stats_answer": f"mean_r = {a['mean_r']!r}\nvar_r = {a['var_r']!r}",
        "normalized_answer": f"normalized_r = np.array({a['normalized_r']!r})\n"
        f"normalized_r_eps = np.array({a['normalized_r_eps']!r})",
        "params_answer": f"params_gain_bias = {a['params_gain_bias']}\n"
        f"params_gain_only = {a['params_gain_only']}\nparams_rms = {a['params_rms']}",
    }


CLASS = {  # student: (their STUDENT line, their answer cells)
    "alice": ("alice", AS_CODE),
    "bob": ("bob", AS_CODE),
    "carol": ("carol", typed("carol")),
    "dave": ("dave", typed("carol")),
    "erin": ("alice", AS_CODE),
    "frank": ("", AS_CODE),
}


def notebook_of(course, student: str, claimed: str, answers: dict):
    nb = released_notebook(course, PS1)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and cell.source.startswith("STUDENT ="):
            cell.source = f"STUDENT = {claimed!r}"
        elif gid in answers:
            cell.source = answers[gid]
    return nb


def _totals(course) -> dict[str, float]:
    scores = gradebook_scores(f"sqlite:///{course / 'gradebook.db'}", PS1)
    return {s: sum(v or 0.0 for v in cells.values()) for s, cells in scores.items()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded by the course's grader and, in a copy, by plain nbgrader autograde."""
    folder = tmp_path_factory.mktemp("variants")
    course = build_course(folder / "course", (PS1,), config_extra=CONFIG_EXTRA)
    for student, (claimed, answers) in CLASS.items():
        write_submission(course, student, notebook_of(course, student, claimed, answers), PS1)
    plain = shutil.copytree(course, folder / "plain")
    done = normlab_course(course, "grade", PS1, "--jobs", "2", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    _, output = run_nbgrader_autograde(plain, PS1)
    return course, plain, output


def autograded(course, student: str):
    return nbformat.read(course / "autograded" / student / PS1 / f"{PS1}.ipynb", 4)


def setup_output(nb) -> str:
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    return "".join(o.get("text", "") for o in cell.outputs)


def test_two_students_work_different_numbers():
    alice, bob = describe(PS1, "alice"), describe(PS1, "bob")
    assert alice["record"] != bob["record"] and alice["d_model"] != bob["d_model"]


def test_each_notebook_is_graded_against_its_submitters_numbers(graded):
    course, _, _ = graded
    totals = _totals(course)
    for student in ("alice", "bob", "carol", "erin", "frank"):
        assert totals[student] == FULL, student
    assert totals["dave"] < FULL  # carol's right numbers are not dave's


def test_the_setup_cell_shows_whose_numbers_grading_used(graded):
    course, _, _ = graded
    shown = setup_output(autograded(course, "erin"))
    assert "for erin" in shown and "STUDENT = 'alice'" in shown and "erin's record" in shown
    carol = describe(PS1, "carol")
    record = ", ".join(f"{v:g}" for v in carol["record"])
    assert f"r = [{record}]" in setup_output(autograded(course, "carol"))


def test_plain_nbgrader_autograde_finds_the_submitter_and_agrees(graded):
    course, plain, output = graded
    assert _totals(plain) == _totals(course), output[-3000:]
    assert "for erin" in setup_output(autograded(plain, "erin"))


def copied_flags(course) -> tuple[list[dict], str]:
    """The class report's copied-variant flags of ps1 (`python -m normlab.course report`)."""
    done = normlab_course(course, "report", PS1)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(course / "reports" / PS1 / "copied_variants.csv", newline="") as handle:
        return list(csv.DictReader(handle)), done.stdout


def test_the_class_report_flags_daves_copied_numbers_with_either_grader(graded):
    """dave typed carol's numbers: the report names him, her variant and every cell (both graders'
    gradebooks alike); carol typed her own and the others wrote code: no flag."""
    course, plain, _ = graded
    assert describe(PS1, "dave")["d_model"] != describe(PS1, "carol")["d_model"]
    every_cell = " ".join(CHECKS[PS1])
    for folder in (course, plain):
        found, said = copied_flags(folder)
        assert found == [{"student": "dave", "variant_of": "carol", "cells": every_cell}], folder
        assert "dave's answers in mean, variance" in said and "carol's variant's" in said, said
