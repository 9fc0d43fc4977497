"""Test cells are read as check calls without running them; anything else is not."""

from __future__ import annotations

from cells import PS2
from demo_course import REPO

from normlab.grading.checkcell import CheckCall, parse_test_cell

COURSE_CELL = '''"""Check that each record is normalized over its own features."""
check('axis', layer_norm)
### BEGIN HIDDEN TESTS
check('axis', layer_norm, hidden=True)
### END HIDDEN TESTS
'''


def test_the_course_cell_is_two_calls_visible_then_hidden():
    assert parse_test_cell(COURSE_CELL) == [
        CheckCall(PS2.axis.grade_id, ("layer_norm",)),
        CheckCall(PS2.axis.grade_id, ("layer_norm",), hidden=True),
    ]


def test_options_and_several_targets():
    calls = parse_test_cell("check('x', a, b, seed=3, assignment='ps3_axes')")
    assert calls == [CheckCall("x", ("a", "b"), seed=3, assignment="ps3_axes")]


def test_anything_else_is_not_a_check_cell():
    for source in (
        "assert layer_norm(1) == 2",
        "check('axis', layer_norm)\nprint('hi')",
        "check(grade_id, layer_norm)",
        "check('axis', lambda x: x)",
        "check('axis', layer_norm, hidden=flag)",
        "check('axis', layer_norm, hidden=1)",
        "check('axis', layer_norm, timeout=3)",
        "other('axis', layer_norm)",
        '"""only a docstring"""',
        "check('axis', layer_norm",
        "",
    ):
        assert parse_test_cell(source) is None, source


def test_every_test_cell_of_every_source_notebook_is_read_by_the_grader():
    """The grader judges only the test cells it reads; one it does not runs in the kernel,
    where check fails closed (tests/course/test_kernel.py). So every test cell the course
    ships must read as check calls of a check that exists, with its own grade_id."""
    import nbformat

    from normlab.course.grader.notebook import grade_id
    from normlab.grading import ASSIGNMENTS, CHECKS
    from normlab.grading.checkcell import is_check_cell

    read = 0
    for assignment in ASSIGNMENTS:
        path = REPO / "solutions" / assignment / f"{assignment}.ipynb"
        for cell in nbformat.read(path, as_version=4).cells:
            if not is_check_cell(cell):
                continue
            calls = parse_test_cell(cell.source)
            assert calls, f"{path.name}: test cell {grade_id(cell)!r} is not only check calls"
            for call in calls:
                assert call.grade_id == grade_id(cell), (path.name, call)
                assert call.grade_id in CHECKS[call.assignment or assignment], (path.name, call)
            read += 1
    assert read >= 91  # every check cell of the eight sets (91 when this test was written)
