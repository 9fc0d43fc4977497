"""The late-work policy: a share of the earned points per started day, after a grace period."""

from __future__ import annotations

import pytest

from normlab.course.plugins import PercentPerDay

HOUR = 3600.0


@pytest.mark.parametrize(
    ("seconds_late", "penalty"),
    [
        (0.0, 0.0),
        (10 * 60.0, 0.0),  # inside the 15-minute grace
        (2 * HOUR, 2.0),  # one started day: 10 % of 20
        (24 * HOUR + 15 * 60.0, 2.0),  # a whole day after the grace: still one day
        (24 * HOUR + 16 * 60.0, 4.0),  # a minute into the second day
        (3 * 24 * HOUR, 6.0),
        (30 * 24 * HOUR, 20.0),  # never more than was earned
    ],
)
def test_ten_percent_of_the_earned_points_per_started_day(seconds_late, penalty):
    assert PercentPerDay().late_submission_penalty("alice", 20.0, seconds_late) == penalty


def test_nothing_earned_nothing_lost():
    assert PercentPerDay().late_submission_penalty("bob", 0.0, 5 * 24 * HOUR) == 0.0


def test_the_policy_is_configurable():
    policy = PercentPerDay(percent_per_day=25.0, grace_minutes=0.0)
    assert policy.late_submission_penalty("carol", 8.0, 1.0) == 2.0
