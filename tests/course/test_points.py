"""A check's points are changed in one place, its CheckSpec: `normlab.course points` carries
them into the source notebook's cell metadata and heading totals."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import nbformat

from normlab.course.reports import points
from normlab.grading import CHECKS

REPO = Path(__file__).resolve().parents[2]
PS2 = "ps2_layer_norm"


def cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def headings(nb) -> list[str]:
    return [c.source.split("\n", 1)[0] for c in nb.cells if c.source.startswith("#")]


def test_the_committed_notebooks_already_follow_their_checks(tmp_path, monkeypatch):
    shutil.copytree(REPO / "solutions", tmp_path / "solutions")
    assert points.sync_course(tmp_path / "solutions") == []


def test_one_edit_moves_the_cell_the_part_and_the_title(tmp_path, monkeypatch):
    axis = CHECKS[PS2].cell.axis
    checks = dict(CHECKS)
    checks[PS2] = {**CHECKS[PS2], axis.grade_id: dataclasses.replace(axis, points=5.0)}
    monkeypatch.setattr(points, "CHECKS", checks)
    shutil.copytree(REPO / "solutions" / PS2, tmp_path / PS2)
    assert points.sync_course(tmp_path) == [tmp_path / PS2 / f"{PS2}.ipynb"]
    nb = nbformat.read(tmp_path / PS2 / f"{PS2}.ipynb", as_version=4)
    assert cell(nb, axis.grade_id).metadata.nbgrader["points"] == 5.0
    was = axis.points
    assert f"({25 + 5 - was:g} points)" in headings(nb)[0]  # the title
    part_b = next(h for h in headings(nb) if h.startswith("## Part B"))
    assert f"({19 + 5 - was:g} points)" in part_b
    assert "(6 points)" in next(h for h in headings(nb) if h.startswith("## Part A"))


def test_hand_graded_points_count_in_the_title(tmp_path):
    shutil.copytree(REPO / "solutions" / "ps6_stability_speed", tmp_path / "ps6_stability_speed")
    nb = nbformat.read(tmp_path / "ps6_stability_speed" / "ps6_stability_speed.ipynb", 4)
    points.sync_notebook(nb, CHECKS["ps6_stability_speed"])
    auto = sum(spec.points for spec in CHECKS["ps6_stability_speed"].values())
    manual = sum(
        c.metadata.nbgrader["points"]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("solution") and c.metadata.nbgrader.get("grade")
    )
    assert manual > 0 and f"({auto + manual:g} points)" in headings(nb)[0]
