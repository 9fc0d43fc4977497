"""`--shard K/N`: every student in exactly one part, whatever the rest of the class."""

from __future__ import annotations

import pytest

from normlab.course.__main__ import main
from normlab.course.grader.class_run import Shard, parse_shard

CLASS = [f"student{i:03d}" for i in range(200)]


def test_every_student_is_in_exactly_one_part():
    for count in (1, 2, 3, 7):
        parts = [Shard(k, count) for k in range(count)]
        for student in CLASS:
            assert sum(part.holds(student) for part in parts) == 1


def test_a_students_part_depends_on_nothing_but_their_id():
    part = Shard(1, 4)
    alone = {s for s in CLASS if part.holds(s)}
    with_others = {s for s in reversed(CLASS + ["late_student"]) if part.holds(s)}
    assert alone == with_others - {"late_student"}
    assert 25 < len(alone) < 75  # about a quarter: the hash spreads the class


@pytest.mark.parametrize(
    ("text", "why"),
    [("2", "K/N"), ("a/b", "K/N"), ("-1/2", "K/N"), ("0/0", "at least 1"), ("2/2", "0 to 1")],
)
def test_a_bad_shard_is_refused_with_what_is_wrong(text, why):
    with pytest.raises(ValueError, match=why):
        parse_shard(text)


def test_the_command_line_refuses_a_bad_shard(capsys):
    with pytest.raises(SystemExit):
        main(["grade", "ps2_layer_norm", "--shard", "4/4"])
    assert "K counts from 0, so it must be 0 to 3" in capsys.readouterr().err
