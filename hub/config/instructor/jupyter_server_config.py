"""The instructor's server on the course's hub (hub/jupyterhub_config.py sets JUPYTER_CONFIG_PATH).

Every nbgrader extension of the course's venv is on (the formgrader included). A terminal runs
bash: the hub's accounts have no login shell (hub/setup).
"""

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

c.ServerApp.terminado_settings = {"shell_command": ["/bin/bash"]}
