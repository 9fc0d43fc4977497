"""A private copy of normlab's reference, for the graders' expectations.

The checkers must not trust the objects a student's kernel can reach: a cell that
runs `normlab.layer_norm = lambda x, *a, **k: x` (or patches `normlab.stats`)
must not change what a check expects. At import, this module compiles normlab's
reference modules from their source files into fresh module objects that are
registered nowhere (`sys.modules` forgets them again), under file names that mark
them as the graders' copy. The copy is the same code as the chapters show, so
the expectations are Ba, Kiros and Hinton (2016, arXiv:1607.06450) exactly as
normlab implements them.

This is an in-kernel precaution, not a defence against code that patches NumPy
itself; running the student's code in another process is (see
`normlab.course`). The distinct file names also let the tripwire
(`normlab.grading.tripwire`) tell the graders' own calls from a student's.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

NORMLAB_DIR = Path(__file__).resolve().parents[1]
PACKAGE = "normlab.grading._reference_copy"
FILENAME_PREFIX = "<graders' copy of normlab/"
# dependency order: each module only imports those before it
MODULES = (
    "_inputs",
    "stats",
    "layer_norm",
    "batch_norm",
    "rms_norm",
    "backward",
    "params",
    "red_team",
    "audit",
)


def _load_private_copy() -> types.SimpleNamespace:
    """Compile and run normlab's reference modules into fresh, unregistered modules."""
    package = types.ModuleType(PACKAGE)
    package.__path__ = []
    package.__package__ = PACKAGE
    loaded: dict[str, types.ModuleType] = {}
    sys.modules[PACKAGE] = package
    try:
        for name in MODULES:
            module = types.ModuleType(f"{PACKAGE}.{name}")
            module.__package__ = PACKAGE
            sys.modules[module.__name__] = module
            source = (NORMLAB_DIR / f"{name}.py").read_text(encoding="utf-8")
            code = compile(source, f"{FILENAME_PREFIX}{name}.py>", "exec")
            exec(code, module.__dict__)  # noqa: S102 (our own reference source)
            setattr(package, name, module)
            loaded[name] = module
    finally:
        for key in [k for k in sys.modules if k == PACKAGE or k.startswith(PACKAGE + ".")]:
            del sys.modules[key]
    return types.SimpleNamespace(**loaded)


_COPY = _load_private_copy()

layer_norm = _COPY.layer_norm.layer_norm
row_stats = _COPY.stats.row_stats
batch_norm = _COPY.batch_norm.batch_norm
rms_norm = _COPY.rms_norm.rms_norm
layer_norm_backward = _COPY.backward.layer_norm_backward
param_count = _COPY.params.param_count
RED_TEAM = _COPY.red_team.RED_TEAM
audit = _COPY.audit.audit
