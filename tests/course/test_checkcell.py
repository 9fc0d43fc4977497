"""Test cells are read as check calls without running them; anything else is not."""

from __future__ import annotations

from normlab.course.checkcell import CheckCall, parse_test_cell

COURSE_CELL = '''"""Check that each record is normalized over its own features."""
check('axis', layer_norm)
### BEGIN HIDDEN TESTS
check('axis', layer_norm, hidden=True)
### END HIDDEN TESTS
'''


def test_the_course_cell_is_two_calls_visible_then_hidden():
    assert parse_test_cell(COURSE_CELL) == [
        CheckCall("axis", ("layer_norm",)),
        CheckCall("axis", ("layer_norm",), hidden=True),
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
