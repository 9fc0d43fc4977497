"""A private copy of normlab's reference, for the graders' expectations.

The checkers must not trust the objects a student's kernel can reach: a cell that
runs `normlab.layer_norm = lambda x, *a, **k: x` (or patches `normlab.stats`)
must not change what a check expects. At import, this module compiles normlab's
reference from its source files into fresh module objects that are registered
nowhere (`sys.modules` forgets them again), under file names that mark them as the
graders' copy. The copy is the same code as the chapters show, so the expectations
are Ba, Kiros and Hinton (2016, arXiv:1607.06450) exactly as normlab implements them.

Which files: `normlab/__init__.py` and every module it imports, directly or through
another module, found by reading their relative imports, and run in an order where each
module comes after those it imports. The copy's public names are then `normlab`'s own
(`__all__`): a function added to the reference is in the copy with nothing to list here.

This is an in-kernel precaution, not a defence against code that patches NumPy
itself; running the student's code in another process is (see
`normlab.course`). The distinct file names also let the tripwire
(`normlab_sandbox.tripwire`) tell the graders' own calls from a student's.
"""

from __future__ import annotations

import ast
import sys
import types
from graphlib import TopologicalSorter
from pathlib import Path

NORMLAB_DIR = Path(__file__).resolve().parents[1]
PACKAGE = "normlab.answer_key._reference_copy"
FILENAME_PREFIX = "<graders' copy of normlab/"
INIT = "__init__"


def relative_imports(name: str) -> set[str]:
    """The normlab modules that module `name` imports relatively (`from . import a`,
    `from .b import c`)."""
    tree = ast.parse((NORMLAB_DIR / f"{name}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update([node.module] if node.module else (a.name for a in node.names))
    return found


def reference_modules() -> tuple[str, ...]:
    """`normlab/__init__.py`'s imports and theirs, each after the modules it imports."""
    graph: dict[str, set[str]] = {}
    todo = [INIT]
    while todo:
        name = todo.pop()
        if name not in graph:
            graph[name] = relative_imports(name)
            todo.extend(graph[name])
    ordered = TopologicalSorter({name: sorted(graph[name]) for name in sorted(graph)})
    return tuple(name for name in ordered.static_order() if name != INIT)


def _run(module: types.ModuleType, name: str) -> None:
    source = (NORMLAB_DIR / f"{name}.py").read_text(encoding="utf-8")
    code = compile(source, f"{FILENAME_PREFIX}{name}.py>", "exec")
    exec(code, module.__dict__)  # noqa: S102 (our own reference source)


def _load_private_copy() -> types.ModuleType:
    """Compile and run normlab's reference into a fresh, unregistered package."""
    package = types.ModuleType(PACKAGE)
    package.__path__ = []
    package.__package__ = PACKAGE
    sys.modules[PACKAGE] = package
    try:
        for name in reference_modules():
            module = types.ModuleType(f"{PACKAGE}.{name}")
            module.__package__ = PACKAGE
            sys.modules[module.__name__] = module
            _run(module, name)
            setattr(package, name, module)
        _run(package, INIT)
    finally:
        for key in [k for k in sys.modules if k == PACKAGE or k.startswith(PACKAGE + ".")]:
            del sys.modules[key]
    return package


_COPY = _load_private_copy()
# the reference's public names (normlab.__all__: layer_norm, row_stats, ...), from the copy
PUBLIC = {name: getattr(_COPY, name) for name in _COPY.__all__}
layer_norm = PUBLIC["layer_norm"]
RED_TEAM = PUBLIC["red_team"].RED_TEAM
