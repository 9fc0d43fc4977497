"""The scale path: the gradebook on a real PostgreSQL server, through nbgrader's `db_url`.

Starts a throwaway local server from Debian's package (`.ci/run` installs it): initdb and
postgres run as the `postgres` system user (they refuse root), listening only on a Unix
socket in a private folder. A course whose `nbgrader_config.py` points `db_url` there is
released, submitted to and graded in parallel; the scores read back from PostgreSQL must be
those of the same class graded on SQLite, and a submission that tries to reach the server
from its kernel must find nothing.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from demo_course import build_course, fill, released_notebook, write_submission
from security_course import CONFIG_EXTRA, HONEST, Graded, honest_student, run_grader, submit_honest
from security_course import gradebook_scores as _scores

pytestmark = pytest.mark.slow
PG_USER = "postgres"
REACH_SERVER = """\
import socket
try:
    _s = socket.socket(socket.AF_UNIX)
    _s.connect("{socket}")
    print("SERVER REACHED")
except OSError as _exc:
    print("SERVER UNREACHABLE", type(_exc).__name__)
"""


def _postgres_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.fail("PostgreSQL is not installed: apt-get install postgresql (.ci/run does)")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_server_user() -> dict:
    """subprocess arguments that run a command as the server's own account."""
    if os.geteuid() != 0:
        return {}
    try:
        account = pwd.getpwnam(PG_USER)
    except KeyError:
        pytest.fail(f"no {PG_USER!r} account: Debian's postgresql package creates it")
    return {"user": account.pw_uid, "group": account.pw_gid}


@pytest.fixture(scope="module")
def postgres_url():
    """A running PostgreSQL server with an empty `gradebook` database; yields its URL."""
    bin_dir, port = _postgres_bin(), _free_port()
    folder = Path(tempfile.mkdtemp(prefix="normlab-pg-"))
    data = folder / "data"
    runas = _as_server_user()
    if runas:
        os.chown(folder, runas["user"], runas["group"])
    run = {"check": True, "capture_output": True, "text": True, **runas}
    subprocess.run([bin_dir / "initdb", "-D", data, "-A", "trust", "-U", PG_USER], **run)
    options = f"-k {folder} -c listen_addresses='' -p {port}"
    subprocess.run(
        [bin_dir / "pg_ctl", "-D", data, "-o", options, "-l", folder / "log", "-w", "start"],
        **run,
    )
    try:
        subprocess.run(
            [bin_dir / "createdb", "-h", folder, "-p", str(port), "-U", PG_USER, "gradebook"],
            **run,
        )
        yield f"postgresql+psycopg2://{PG_USER}@/gradebook?host={folder}&port={port}"
    finally:
        subprocess.run([bin_dir / "pg_ctl", "-D", data, "-m", "immediate", "stop"], **run)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres_course(postgres_url, tmp_path_factory) -> tuple[Graded, str]:
    config = CONFIG_EXTRA + f"c.CourseDirectory.db_url = {postgres_url!r}\n"
    course = build_course(tmp_path_factory.mktemp("postgres") / "course", config_extra=config)
    submit_honest(course)
    host = postgres_url.split("host=")[1].split("&")[0]
    port = postgres_url.rsplit("port=", 1)[1]
    probe = REACH_SERVER.replace("{socket}", f"{host}/.s.PGSQL.{port}")
    write_submission(course, "attack_reach_server", fill(released_notebook(course), {}, [probe]))
    seconds, output = run_grader(course)
    return Graded(course, seconds, output), postgres_url


def test_the_gradebook_lives_in_postgresql(postgres_course):
    graded, url = postgres_course
    assert not (graded.root / "gradebook.db").exists()
    assert set(_scores(url)) == {honest_student(k) for k in HONEST} | {"attack_reach_server"}


def test_postgresql_scores_equal_sqlite_scores(postgres_course, honest_course):
    _, url = postgres_course
    on_postgres = _scores(url)
    on_sqlite = honest_course.scores()
    for kind in HONEST:
        assert on_postgres[honest_student(kind)] == on_sqlite[honest_student(kind)]


def test_a_kernel_cannot_reach_the_server(postgres_course):
    graded, url = postgres_course
    text = "".join(
        output.get("text", "")
        for cell in graded.notebook("attack_reach_server").cells
        for output in cell.get("outputs", [])
    )
    assert "SERVER UNREACHABLE" in text and "SERVER REACHED" not in text
    assert sum(v or 0 for v in _scores(url)["attack_reach_server"].values()) == 0
