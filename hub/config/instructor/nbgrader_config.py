"""The instructor's nbgrader on the course's hub: the course's own config, and its sandboxed grader.

The formgrader (and `nbgrader` in the instructor's hub terminals) reads this file from
JUPYTER_CONFIG_PATH (hub/jupyterhub_config.py). It loads the course's own `nbgrader_config.py`
unchanged (late penalties, feedback, hidden tests), names the course's root and exchange, and
swaps nbgrader's Execute step for the course's `SandboxExecute`, so that the formgrader's
Autograde runs each submission in a sandbox kernel as `python -m normlab.course grade` does
(strict isolation, or a refusal that says why). The course's own `nbgrader_config.py` keeps
plain nbgrader for its CLI outside the hub and for the parity tests.

The steps are named by their import paths, not given as classes: the formgrader shows its
configuration as JSON, where a class is a blank (`'autograde_preprocessors': [, , , ]`) and a
name says which grader runs (`...grader.execute.SandboxExecute`). Feedback is the course's page
(`plugins.FeedbackExporter`, named in the course's config), the formgrader's Generate Feedback
included.
"""

import os

from normlab.course.grader.execute import autograde_preprocessors

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
course = os.environ["LAYERNORM_COURSE"]

load_subconfig("nbgrader_config.py", path=course)  # noqa: F821 (provided by traitlets)
c.CourseDirectory.root = course
c.Exchange.root = os.environ["NBGRADER_EXCHANGE"]


def dotted(step) -> str:
    """A preprocessor (a class or its import path) as its import path."""
    return step if isinstance(step, str) else f"{step.__module__}.{step.__qualname__}"


if "sanitize_preprocessors" in c.Autograde:
    c.Autograde.sanitize_preprocessors = [dotted(s) for s in c.Autograde.sanitize_preprocessors]
c.Autograde.autograde_preprocessors = [dotted(s) for s in autograde_preprocessors(c)]
