"""nbgrader for a student on the course's hub: the course and its exchange, nothing else.

Fetch, Validate and Submit (the Assignments tab) use nbgrader's own exchange; the hub's
spawner sets NBGRADER_EXCHANGE (hub/jupyterhub_config.py).
"""

import os

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

c.CourseDirectory.course_id = "layernorm"
c.Exchange.root = os.environ["NBGRADER_EXCHANGE"]
