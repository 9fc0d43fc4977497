"""The course's late-work policy, as an nbgrader late-submission plugin.

nbgrader's own plugin knows two policies, no penalty (its default) and zero for any late work.
The course's `nbgrader_config.py` uses this one instead:

    c.AssignLatePenalties.plugin_class = "normlab.course.late.PercentPerDay"
    c.PercentPerDay.percent_per_day = 10     # of the points the notebook earned
    c.PercentPerDay.grace_minutes = 15

A notebook submitted after its assignment's due date (`nbgrader db assignment add ... --duedate`)
and past the grace period loses `percent_per_day` of the points it earned for every day or part
of a day it is late, never more than it earned: two hours late is one day, 10 %; three days
late, 30 %. nbgrader calls the plugin at autograde (`AssignLatePenalties`), so `make grade`
and plain `nbgrader autograde` apply it alike; `nbgrader export` and
`python -m normlab.course export` subtract it.
"""

from __future__ import annotations

import math

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float

DAY_S = 24 * 3600


class PercentPerDay(LateSubmissionPlugin):
    """`percent_per_day` of the earned points per started day late, after `grace_minutes`."""

    percent_per_day = Float(10.0, help="Percent of the earned points lost per day late").tag(
        config=True
    )
    grace_minutes = Float(15.0, help="Minutes after the due date that are not late").tag(
        config=True
    )

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        late = total_seconds_late - 60.0 * self.grace_minutes
        if late <= 0 or not score:
            return 0.0
        days = math.ceil(late / DAY_S)
        return min(score, score * self.percent_per_day * days / 100.0)
