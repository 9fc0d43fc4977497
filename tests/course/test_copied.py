"""The copied-variant flag's pieces (normlab.course.reports.copied): what counts as a typed
number, and which cells a typed answer flags. The class-level flag, with both graders, is in
test_variants.py."""

from __future__ import annotations

import numpy as np
import pytest

from normlab.course.reports.copied import copied_cells, flags, typed_values
from normlab.course.variant import describe
from normlab.grading import CHECKS

PS1 = "ps1_by_hand"
CELL = CHECKS[PS1].cell
CELLS = tuple(CHECKS[PS1])  # every cell of ps1, in the notebook's order


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("mean_r = 7.0\nvar_r = 36", {"mean_r": 7.0, "var_r": 36.0}),
        ("var_r = 216 / 6", {"var_r": 36.0}),
        ("normalized_r = np.array([0.5, -1/2])", {"normalized_r": [0.5, -0.5]}),
        ("normalized_r = numpy.asarray((1, 2 ** 2))", {"normalized_r": [1.0, 4.0]}),
        ("mean_r = -(3 - 10)", {"mean_r": 7.0}),
    ],
)
def test_typed_numbers_are_read(source, expected):
    found = typed_values(source)
    assert set(found) == set(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(found[name], value)


@pytest.mark.parametrize(
    "source",
    [
        "mean_r = r.mean()",  # computed: the student's own numbers
        "mean_r = sum(r) / len(r)",
        "mean_r = np.mean([1, 2])",
        "mean_r = __import__('os').getcwd()",
        "mean_r = 7.0\nmean_r = r.mean()",  # the last line is the answer
        "mean_r, var_r = 7.0, 36.0",  # not one name = one value
        "mean_r = 7.0 +",  # not Python
    ],
)
def test_anything_but_literals_is_skipped_and_never_run(source):
    assert "mean_r" not in typed_values(source)


def answers_typed(answers: dict) -> dict:
    return {name: np.asarray(value, dtype=np.float64) for name, value in answers.items()}


def test_another_students_numbers_flag_each_cell_they_fill():
    carol, dave = describe(PS1, "carol")["answers"], describe(PS1, "dave")["answers"]
    typed = answers_typed(carol)
    assert copied_cells(PS1, typed, own=dave, other=carol) == CELLS
    typed["mean_r"] = np.asarray(dave["mean_r"])  # his own mean: that cell is not flagged
    assert CELL.mean.grade_id not in copied_cells(PS1, typed, own=dave, other=carol)


def test_ones_own_numbers_or_a_near_miss_flag_nothing():
    carol, dave = describe(PS1, "carol")["answers"], describe(PS1, "dave")["answers"]
    assert copied_cells(PS1, answers_typed(dave), own=dave, other=carol) == ()
    rounded = {k: np.round(np.asarray(v, dtype=np.float64), 3) for k, v in carol.items()}
    assert CELL.eps_effect.grade_id not in copied_cells(PS1, rounded, own=dave, other=carol)


def test_a_classmate_with_the_same_numbers_is_not_copied_from():
    """Two students whose variants give the same answer for a cell: typing it is one's own."""
    dave = describe(PS1, "dave")["answers"]
    twin = dict(dave)
    assert copied_cells(PS1, answers_typed(dave), own=dave, other=twin) == ()


def test_one_number_in_common_is_no_flag_and_the_best_match_is_named(tmp_path):
    """carol's mean is alice's too (7): dave, who typed carol's numbers, is flagged once, as
    carol's; a student whose one wrong number happens to be a classmate's is not flagged."""
    import nbformat

    carol = describe(PS1, "carol")["answers"]
    notebooks = {}
    for student, source in {
        "dave": "\n".join(f"{k} = {v!r}" for k, v in carol.items()),
        "alice": "mean_r = 7.0\nvar_r = 1.0",  # her own mean; a wrong variance
        "carol": "mean_r = r.mean()",
    }.items():
        cell = nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"solution": True}})
        path = tmp_path / f"{student}.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
        notebooks[student] = [path]
    assert describe(PS1, "alice")["answers"]["mean_r"] == carol["mean_r"]
    (flag,) = flags(PS1, notebooks)
    assert (flag.student, flag.variant_of, len(flag.cells)) == ("dave", "carol", 5)
