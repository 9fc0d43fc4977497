"""A private copy of normlab's reference, for the graders' expectations.

A cell that runs `normlab.layer_norm = lambda x, *a, **k: x` must not change what a check
expects. So at import this compiles `normlab/__init__.py` and every module it imports
(`reference_modules`) into fresh module objects registered nowhere, under file names that mark
them as the graders' copy (which also lets the tripwire tell the graders' calls from a
student's). The same code as the chapters show: Ba, Kiros and Hinton (2016, arXiv:1607.06450)
exactly as normlab implements them; its public names are `normlab.__all__`. An in-kernel
precaution; the defence is running the student's code in another process (`normlab.course`).
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
    """The normlab modules that module `name` imports relatively."""
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
