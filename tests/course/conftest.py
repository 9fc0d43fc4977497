"""Fixtures of the adversarial suite: real courses, graded once per test run.

- `attack_course`: a fresh ps2 course (5 s cell timeout) with the honest class and every
  attacker of security_attacks.py, graded by `python -m normlab.course grade --jobs 2`, with
  hashes of everything grading must not change taken before and after.
- `honest_course`: the honest class alone, graded the same way: the reference for "other
  students' grades unchanged".
- `serial_honest_course`: the honest class graded by plain serial `nbgrader autograde`.

Each is graded once per run and shared by every pytest-xdist worker (run_once.py); tests read
them, and a test that changes a course works on a copy. As root, gradings that run at the same
time take kernel uids of their own (demo_course.UID_BASE, security_course.ATTACK_UID_BASE);
tests/conftest.py says which tests run on one worker (`xdist_group`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from demo_course import build_course
from run_once import once
from security_attacks import ATTACKS
from security_course import (
    ATTACK_UID_BASE,
    CONFIG_EXTRA,
    Graded,
    protected_hashes,
    run_grader,
    run_nbgrader_autograde,
    submit_attacker,
    submit_honest,
)


def _attack_course(folder: Path) -> Graded:
    course = build_course(folder / "course", config_extra=CONFIG_EXTRA)
    submit_honest(course)
    for attack in ATTACKS:
        submit_attacker(course, attack)
    before = protected_hashes(course)
    seconds, output = run_grader(course, uid_base=ATTACK_UID_BASE)
    return Graded(course, seconds, output, before, protected_hashes(course))


def _honest_course(folder: Path) -> Graded:
    course = build_course(folder / "course", config_extra=CONFIG_EXTRA)
    submit_honest(course)
    seconds, output = run_grader(course)
    return Graded(course, seconds, output)


def _serial_honest_course(folder: Path) -> Graded:
    course = build_course(folder / "course", config_extra=CONFIG_EXTRA)
    submit_honest(course)
    seconds, output = run_nbgrader_autograde(course)
    return Graded(course, seconds, output)


@pytest.fixture(scope="session")
def attack_course(tmp_path_factory) -> Graded:
    return once(tmp_path_factory, "attack-course", _attack_course)


@pytest.fixture(scope="session")
def honest_course(tmp_path_factory) -> Graded:
    return once(tmp_path_factory, "honest-course", _honest_course)


@pytest.fixture(scope="session")
def serial_honest_course(tmp_path_factory) -> Graded:
    return once(tmp_path_factory, "serial-honest-course", _serial_honest_course)
