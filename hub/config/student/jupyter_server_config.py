"""A student's server on the course's hub (hub/jupyterhub_config.py sets JUPYTER_CONFIG_PATH).

nbgrader's Assignments tab and Validate button stay; its formgrader and course list, which
are the instructor's, are switched off here and, in JupyterLab, in labconfig/page_config.json
(with JupyterLab's news announcements: no student need be asked). A terminal runs bash: the
hub's accounts have no login shell (hub/setup).
"""

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

c.ServerApp.jpserver_extensions = {
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.course_list": False,
}
c.ServerApp.terminado_settings = {"shell_command": ["/bin/bash"]}
