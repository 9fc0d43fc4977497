"""nbgrader's configuration, loaded exactly as `nbgrader autograde` loads it, from the cwd.

`load_app()` builds nbgrader's own `AutogradeApp` and initializes it with no arguments, so the
course's `nbgrader_config.py` (in the current directory, and the Jupyter config paths) applies
as it does on the command line. `grading_config` then adds only what the parallel grader
needs: `SandboxExecute` in place of `Execute`, and for an SQLite gradebook a busy timeout, so
a worker waits for another's short write instead of failing on "database is locked".
"""

from __future__ import annotations

import copy
import os
import sys
from urllib.parse import urlsplit

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps.autogradeapp import AutogradeApp

from .execute import autograde_preprocessors
from .isolation import sqlite_path

SQLITE_BUSY_TIMEOUT_S = 60


def load_app() -> AutogradeApp:
    """nbgrader's autograde app, configured from the cwd like the CLI."""
    bin_dir = os.path.dirname(sys.executable)  # nbgrader runs `alembic` from PATH
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    app = AutogradeApp()
    app.initialize([])
    return app


def grading_config(app: AutogradeApp):
    """The app's config plus the parallel grader's two changes (see the module docstring)."""
    config = copy.deepcopy(app.config)
    config.Autograde.autograde_preprocessors = autograde_preprocessors(config)
    db_url = app.coursedir.db_url  # SQLite's gets a busy timeout, unless it sets one
    if urlsplit(db_url).scheme.startswith("sqlite") and "timeout=" not in db_url:
        db_url += f"{'&' if '?' in db_url else '?'}timeout={SQLITE_BUSY_TIMEOUT_S}"
    config.CourseDirectory.db_url = db_url
    return config


def require_gradebook(db_url: str, advice: str = "") -> None:
    """Exit where an SQLite gradebook is missing: opening it would create an empty one."""
    database = sqlite_path(db_url)
    if database and not os.path.exists(database):
        raise SystemExit(f"No gradebook at {database}: run this in the course directory{advice}")


def require_assignment(db_url: str, assignment: str) -> None:
    """Exit with nbgrader's advice if the assignment is not released."""
    require_gradebook(db_url, f", after 'nbgrader generate_assignment {assignment}'")
    with Gradebook(db_url) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise SystemExit(
                f"No assignment with ID {assignment!r} exists in the gradebook: "
                f"did you forget to run 'nbgrader generate_assignment {assignment}'?"
            ) from None
