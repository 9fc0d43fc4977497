"""The instructor's nbgrader on the course's hub: the course's own config, and its sandboxed grader.

The formgrader (and `nbgrader` in the instructor's hub terminals) reads this file from
JUPYTER_CONFIG_PATH (hub/jupyterhub_config.py). It loads the course's own `nbgrader_config.py`
unchanged (late penalties, feedback, hidden tests), names the course's root and exchange, and
swaps nbgrader's Execute step for the course's `SandboxExecute`, so that the formgrader's
Autograde runs each submission in a sandbox kernel as `python -m normlab.course grade` does
(strict isolation, or a refusal that says why). The course's own `nbgrader_config.py` keeps
plain nbgrader for its CLI outside the hub and for the parity tests.

(The formgrader's Generate Feedback asks nbconvert for the template `feedback` whatever the
config says; the instructor's JUPYTER_PATH, hub/data/instructor, has one of that name: a
conf.json whose base is the course's `normlab_feedback`, so students get the course's page.)
"""

import os

from normlab.course.grader.execute import autograde_preprocessors

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
course = os.environ["LAYERNORM_COURSE"]

load_subconfig("nbgrader_config.py", path=course)  # noqa: F821 (provided by traitlets)
c.CourseDirectory.root = course
c.Exchange.root = os.environ["NBGRADER_EXCHANGE"]
c.Autograde.autograde_preprocessors = autograde_preprocessors(c)
