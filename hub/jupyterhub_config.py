"""The LayerNorm course's JupyterHub (`make hub-demo`, `make hub`; instructors/hub.md).

JupyterHub's own parts, as a single-server course runs them: PAMAuthenticator (the machine's
local accounts and their passwords), LocalProcessSpawner (each user's server a process running
as that user), configurable-http-proxy (npm, pinned by hub/package-lock.json) in front on
127.0.0.1:$HUB_PORT. The proxy's API listens on the next port, the hub itself on the one after.

Who may log in, and the paths, come from `$LAYERNORM_HUB_ROOT/hub.json`, which hub/setup writes.
Each user's server gets one of two environments (`give_environment`):

- a student: JupyterLab from the hub's own venv (JupyterHub, JupyterLab, nbgrader; no normlab),
  with nbgrader's Assignments and Validate but not its formgrader (the config in
  `config/student`), and one kernel, `python3`, whose normlab is the student download;
- the instructor: JupyterLab from the course's venv, rooted in the course, with the formgrader
  and a hub-only nbgrader config (`config/instructor`) that puts the course's sandboxed grader
  behind its Autograde button. The formgrader opens in a tab of its own
  (/user/<instructor>/formgrader): inside JupyterLab's frame the single-user server's
  `frame-ancestors 'none'` blanks it (JupyterHub 4.1, nbgrader #1870), so JupyterLab's
  Nbgrader > Formgrader item is switched off (`config/instructor/labconfig`).
"""

import json
import os
from pathlib import Path

from tornado.web import RedirectHandler

ROOT = Path(os.environ["LAYERNORM_HUB_ROOT"])
PORT = int(os.environ.get("HUB_PORT", "8000"))
HUB = json.loads((ROOT / "hub.json").read_text())
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

c.JupyterHub.bind_url = f"http://127.0.0.1:{PORT}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 1}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{PORT + 2}"
c.ConfigurableHTTPProxy.command = [str(ROOT / "proxy/node_modules/.bin/configurable-http-proxy")]

# the hub's state: kept when SIGINT stops it (users, cookies); hub/clean removes it
STATE = ROOT / "state"
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")

# the formgrader's folder links (an assignment's source, Preview) are /tree/<path> from the
# site's root (nbgrader's utils.js linkTo; nbgrader #1794, #1888), which JupyterHub sends to
# /hub/tree/... (404): from there, on to the user's own server (its Notebook 7 tree view)
c.JupyterHub.extra_handlers = [
    (r"/(tree|notebooks|edit)/(.*)", RedirectHandler,
     {"url": "/hub/user-redirect/{0}/{1}", "permanent": False}),
]  # fmt: skip

c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = {HUB["instructor"], *HUB["students"]}
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120  # a first JupyterLab on a busy machine


def give_environment(spawner) -> None:
    """The student's or the instructor's environment for this user's server."""
    common = {"LANG": "C.UTF-8", "NBGRADER_EXCHANGE": HUB["exchange"]}
    if spawner.user.name == HUB["instructor"]:
        venv = Path(HUB["course"]) / ".venv"
        # in the course: the formgrader wants it under the server's root, and a terminal opened
        # at the root starts in the server's working folder (LocalProcessSpawner's is the home)
        spawner.cmd = [
            "/usr/bin/env",
            f"--chdir={HUB['course']}",
            str(venv / "bin/jupyterhub-singleuser"),
        ]
        spawner.notebook_dir = HUB["course"]
        spawner.environment = {
            **common,
            "PATH": f"{venv / 'bin'}:{SYSTEM_PATH}",
            "JUPYTER_CONFIG_PATH": str(ROOT / "config/instructor"),
            "LAYERNORM_COURSE": HUB["course"],
        }
    else:
        hub_venv = ROOT / "hub-venv"
        spawner.cmd = [str(hub_venv / "bin/jupyterhub-singleuser")]
        spawner.environment = {
            **common,
            # a terminal's python is the kernel's (the student download), then the hub's tools
            "PATH": f"{ROOT / 'student-kernel/bin'}:{hub_venv / 'bin'}:{SYSTEM_PATH}",
            "JUPYTER_CONFIG_PATH": str(ROOT / "config/student"),
            "JUPYTER_PATH": str(ROOT / "data/student"),  # kernels/python3: the student kernel
        }


c.Spawner.pre_spawn_hook = give_environment
