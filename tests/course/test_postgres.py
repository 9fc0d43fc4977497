"""The scale path: the gradebook on a real PostgreSQL server, through nbgrader's `db_url`.

Starts a throwaway local server from Debian's package (`.ci/run` installs it): initdb and
postgres run as the `postgres` system user (they refuse root), listening only on a Unix
socket in a private folder. A course whose `nbgrader_config.py` points `db_url` there is
released, submitted to and graded in parallel; the scores read back from PostgreSQL must be
those of the same class graded on SQLite, and a submission that tries to reach the server
from its kernel must find nothing. Then the same class, in a database of its own, graded by
two shards at once (`--shard 0/2` and `--shard 1/2`, as two hosts of a Slurm array or a
Kubernetes indexed Job would) must get exactly the scores of the one unsharded run.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from demo_course import PS2, build_course, course_env, fill, released_notebook, write_submission
from security_course import (
    CONFIG_EXTRA,
    HONEST,
    UID_BASE,
    Graded,
    honest_student,
    run_grader,
    submit_honest,
)
from security_course import gradebook_scores as _scores

from normlab.course.reports.export import rows as export_rows

pytestmark = [pytest.mark.slow, pytest.mark.kernels]
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
def postgres_server():
    """A running PostgreSQL server; yields `database(name)`, which creates an empty database
    and returns its URL."""
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

    def database(name: str) -> str:
        subprocess.run(
            [bin_dir / "createdb", "-h", folder, "-p", str(port), "-U", PG_USER, name], **run
        )
        return f"postgresql+psycopg2://{PG_USER}@/{name}?host={folder}&port={port}"

    try:
        yield database
    finally:
        subprocess.run([bin_dir / "pg_ctl", "-D", data, "-m", "immediate", "stop"], **run)
        shutil.rmtree(folder, ignore_errors=True)


def _class_on(url: str, folder: Path) -> Path:
    """A course whose gradebook is at `url`: the honest class and one server-seeking kernel."""
    config = CONFIG_EXTRA + f"c.CourseDirectory.db_url = {url!r}\n"
    course = build_course(folder / "course", config_extra=config)
    submit_honest(course)
    host = url.split("host=")[1].split("&")[0]
    port = url.rsplit("port=", 1)[1]
    probe = REACH_SERVER.replace("{socket}", f"{host}/.s.PGSQL.{port}")
    write_submission(course, "attack_reach_server", fill(released_notebook(course), {}, [probe]))
    return course


@pytest.fixture(scope="module")
def postgres_course(postgres_server, tmp_path_factory) -> tuple[Graded, str]:
    postgres_url = postgres_server("gradebook")
    course = _class_on(postgres_url, tmp_path_factory.mktemp("postgres"))
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


def test_two_shards_at_once_give_the_scores_of_one_run(postgres_server, postgres_course, tmp_path):
    _, unsharded = postgres_course
    url = postgres_server("gradebook_shards")
    course = _class_on(url, tmp_path)
    graders = [
        subprocess.Popen(
            [sys.executable, "-m", "normlab.course", "grade", PS2, "--shard", f"{k}/2"]
            + ["--jobs", "1", "--no-progress", "--uid-base", str(UID_BASE + k)],
            cwd=course,
            env=course_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for k in range(2)
    ]
    outputs = [grader.communicate(timeout=900)[0] for grader in graders]
    assert [grader.returncode for grader in graders] == [0, 0], outputs
    graded = [int(re.search(r"(\d+) graded", out)[1]) for out in outputs]
    assert all(graded) and sum(graded) == len(_scores(unsharded)), outputs
    assert _scores(url) == _scores(unsharded)


def test_the_export_reads_postgresql_as_it_reads_sqlite(postgres_course, honest_course):
    _, url = postgres_course
    header, on_postgres = export_rows(url)
    assert header[-2:] == [PS2, "total"]
    _, on_sqlite = export_rows(f"sqlite:///{honest_course.root / 'gradebook.db'}")
    honest = {row["student_id"]: row for row in on_sqlite}
    assert honest and all(row[PS2] != "" for row in honest.values())
    for row in on_postgres:
        if row["student_id"] in honest:
            assert row == honest[row["student_id"]]
