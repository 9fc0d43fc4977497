"""Fixtures of the adversarial suite: real courses, graded once per session.

- `attack_course`: a fresh ps2 course (5 s cell timeout) with the honest class and every
  attacker of security_attacks.py, graded by `python -m normlab.course grade --jobs 2`, with
  hashes of everything grading must not change taken before and after.
- `honest_course`: the honest class alone, graded the same way: the reference for "other
  students' grades unchanged".
- `serial_honest_course`: the honest class graded by plain serial `nbgrader autograde`.
"""

from __future__ import annotations

import pytest
from demo_course import build_course
from security_attacks import ATTACKS
from security_course import (
    CONFIG_EXTRA,
    Graded,
    protected_hashes,
    run_grader,
    run_nbgrader_autograde,
    submit_attacker,
    submit_honest,
)


@pytest.fixture(scope="session")
def attack_course(tmp_path_factory) -> Graded:
    course = build_course(tmp_path_factory.mktemp("attacks") / "course", config_extra=CONFIG_EXTRA)
    submit_honest(course)
    for attack in ATTACKS:
        submit_attacker(course, attack)
    before = protected_hashes(course)
    seconds, output = run_grader(course)
    return Graded(course, seconds, output, before, protected_hashes(course))


@pytest.fixture(scope="session")
def honest_course(tmp_path_factory) -> Graded:
    course = build_course(tmp_path_factory.mktemp("honest") / "course", config_extra=CONFIG_EXTRA)
    submit_honest(course)
    seconds, output = run_grader(course)
    return Graded(course, seconds, output)


@pytest.fixture(scope="session")
def serial_honest_course(tmp_path_factory) -> Graded:
    course = build_course(tmp_path_factory.mktemp("serial") / "course", config_extra=CONFIG_EXTRA)
    submit_honest(course)
    seconds, output = run_nbgrader_autograde(course)
    return Graded(course, seconds, output)
