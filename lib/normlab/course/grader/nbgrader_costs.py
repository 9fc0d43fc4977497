"""Two costs nbgrader 0.9 pays again for every submission, paid once per grading worker.

- Every `Gradebook` creates a new SQLAlchemy engine, which keeps its compiled SQL statements:
  each submission compiled the same few hundred again (about 0.2 s of CPU). The worker keeps
  one engine per database URL; `Gradebook.close()` still disposes of its connections.
- Every cell's metadata is checked with `jsonschema.validate`, which first checks nbgrader's
  schema against JSON Schema's metaschema (about 0.2 s a submission). The worker checks the
  schema once, then validates with `jsonschema.validate`'s own steps: the same error raised.

`reuse_in_this_process()` installs both in a worker after it is forked (an engine must never
cross a fork: its pooled connections would be shared). Nothing else of nbgrader changes.
"""

from __future__ import annotations

import functools

import jsonschema
from jsonschema import exceptions, validators
from nbgrader import api
from nbgrader.nbgraderformat import common

_engine = functools.cache(api.create_engine)  # one engine per (URL, options)


class _SchemaCheckedOnce:
    """Stands for the `jsonschema` module in nbgrader's metadata check: `validate` as
    jsonschema's, with each schema checked against its metaschema the first time only."""

    def __init__(self) -> None:
        self._validators: dict[int, tuple] = {}

    def validate(self, instance, schema) -> None:
        found = self._validators.get(id(schema))
        if found is None or found[0] is not schema:
            cls = validators.validator_for(schema)
            cls.check_schema(schema)
            found = self._validators[id(schema)] = (schema, cls(schema))
        error = exceptions.best_match(found[1].iter_errors(instance))
        if error is not None:
            raise error

    def __getattr__(self, name: str):
        return getattr(jsonschema, name)


def reuse_in_this_process() -> None:
    """Keep nbgrader's engines and its checked schema for the rest of this process."""
    api.create_engine = _engine
    common.jsonschema = _SchemaCheckedOnce()
