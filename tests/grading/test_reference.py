"""The graders' private copy of the reference: what `import normlab` loads, nothing listed."""

from __future__ import annotations

import json
import subprocess
import sys

import normlab
from normlab.answer_key import reference


def test_the_copy_holds_the_modules_import_normlab_loads():
    """Derived from the imports, the copy cannot drift from what `import normlab` loads."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys, normlab; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('normlab.'))))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {m.removeprefix("normlab.") for m in json.loads(loaded.stdout)}
    assert names == set(reference.reference_modules())


def test_each_module_of_the_copy_runs_after_the_modules_it_imports():
    order = reference.reference_modules()
    for position, name in enumerate(order):
        assert reference.relative_imports(name) <= set(order[:position]), name


def test_the_copys_public_names_are_normlabs_own_objects_compiled_apart():
    assert set(reference.PUBLIC) == set(normlab.__all__)
    for name in ("layer_norm", "row_stats", "layer_norm_backward", "group_norm"):
        copied, published = reference.PUBLIC[name], getattr(normlab, name)
        assert copied is not published and copied.__name__ == published.__name__
        assert copied.__code__.co_filename.startswith(reference.FILENAME_PREFIX)
    assert not any(m.startswith(reference.PACKAGE) for m in sys.modules)
