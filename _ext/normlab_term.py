"""Sphinx extension: the instructor's term switch, a site without the problem sets' answers.

Where a chapter shows the reference code of a function that a problem set asks students to
write, the code sits in a folded block, labelled as the reference to open after that problem
set, inside Sphinx's own `only` directive:

    ::::{only} not term
    :::{dropdown} Reference `rms_norm`: open it after ps4_rmsnorm
    ```{literalinclude} ../lib/normlab/rms_norm.py
    :pyobject: rms_norm
    ```
    :::
    ::::

By default the block is built, folded (closed until the reader opens it). During a term the
instructor builds with the Sphinx tag `term`, and `only` leaves the blocks out of the HTML
altogether. This extension adds that tag when the environment has NORMLAB_TERM set to
anything but "", "0", "false" or "no" (`make book NORMLAB_TERM=1`), or when `_config.yml`
sets `normlab_term: true` under `sphinx: config:`. tests/book/test_spoilers.py checks that
every such block is wrapped this way, and both builds in a browser.
"""

from __future__ import annotations

import os

TAG = "term"
ENV_VAR = "NORMLAB_TERM"
OFF = ("", "0", "false", "no")


def term_requested(environ=os.environ, configured: bool = False) -> bool:
    """True when this build is the term build (environment variable or config value)."""
    return bool(configured) or environ.get(ENV_VAR, "").strip().lower() not in OFF


def _on_config_inited(app, config) -> None:
    if term_requested(configured=config.normlab_term):
        app.tags.add(TAG)


def setup(app):
    app.add_config_value("normlab_term", False, "env", types=[bool])
    app.connect("config-inited", _on_config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
