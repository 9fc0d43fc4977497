"""The tamper attacks are real: plain `nbgrader autograde`, which runs the checks in the
student's own kernel, gives them more than they earned. (The parallel grader gives them
exactly their fixed outcome: test_attacks.py.)"""

from __future__ import annotations

import pytest
from demo_course import build_course
from security_attacks import ATTACKS
from security_course import (
    CONFIG_EXTRA,
    Graded,
    attack_student,
    run_nbgrader_autograde,
    submit_attacker,
)

pytestmark = [pytest.mark.slow, pytest.mark.kernels]
LIVE = [attack for attack in ATTACKS if attack.live_in_kernel]


@pytest.fixture(scope="module")
def fooled_course(tmp_path_factory) -> Graded:
    course = build_course(tmp_path_factory.mktemp("live") / "course", config_extra=CONFIG_EXTRA)
    for attack in LIVE:
        submit_attacker(course, attack)
    seconds, output = run_nbgrader_autograde(course)
    return Graded(course, seconds, output)


@pytest.mark.parametrize("attack", LIVE, ids=lambda a: a.name)
def test_attack_fools_plain_nbgrader(fooled_course, attack):
    assert fooled_course.total(attack_student(attack.name)) > attack.score
