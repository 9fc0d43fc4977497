"""A grading worker pays nbgrader's per-submission costs once (`worker.reuse_in_this_process`)
and grades as nbgrader does: the parity tests compare whole classes with plain nbgrader; here,
the two replacements themselves, in a process of their own (they last for the process)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import jsonschema
    from nbgrader.api import Gradebook
    from nbgrader.nbgraderformat import common
    from nbgrader.nbgraderformat.v3 import MetadataValidatorV3

    from normlab.course.grader import worker

    BAD = [
        {"grade": True, "solution": False, "schema_version": 3},  # no "locked"
        {"grade": "yes", "solution": 1, "locked": True, "grade_id": "a", "points": "two",
         "schema_version": 3},  # three wrong types: best_match picks one
    ]
    validator = MetadataValidatorV3()
    before = []
    for meta in BAD:
        try:
            jsonschema.validate(meta, validator.schema)
        except jsonschema.ValidationError as error:
            before.append((error.message, list(error.path)))
    worker.reuse_in_this_process()
    after = []
    for meta in BAD * 2:
        try:
            common.jsonschema.validate(meta, validator.schema)
        except jsonschema.ValidationError as error:
            after.append((error.message, list(error.path)))
    assert len(before) == 2 and after == before * 2, (before, after)
    common.jsonschema.validate({**BAD[0], "locked": True, "points": 1}, validator.schema)

    url = "sqlite:///" + sys.argv[1]
    with Gradebook(url) as gb:
        gb.add_student("alice")
        engine = gb.engine
    with Gradebook(url) as gb:  # the same engine, its connections given back in between
        assert gb.engine is engine
        assert [s.id for s in gb.students] == ["alice"]
    with Gradebook(url + "-other") as gb:
        assert gb.engine is not engine and gb.students == []
    print("ok")
    """
)


def test_the_schema_is_checked_once_and_each_cell_gets_jsonschemas_error(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", "import sys\n" + SCRIPT, str(tmp_path / "gradebook.db")],
        capture_output=True,
        text=True,
        timeout=120,
        # nbgrader runs the `alembic` executable when it creates a gradebook
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        },
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
