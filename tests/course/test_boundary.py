"""normlab_sandbox is a leaf: importing all of it (as the grading kernel does) loads nothing
of normlab, so the kernel never holds the reference; nor torch, but for ps8's probes, which
only a ps8 case loads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import normlab_sandbox

MODULES = sorted(p.stem for p in Path(normlab_sandbox.__file__).parent.glob("[a-z]*.py"))
TORCH_MODULES = ["module_probes"]  # ps8: probes of a torch module (see guarded._probe)
PROBE = """
import sys
for name in {modules!r}:
    __import__("normlab_sandbox." + name)
loaded = sorted(m for m in sys.modules if m == "normlab" or m.startswith(("normlab.", "torch")))
print(sorted({{m.split(".")[0] for m in loaded}}))
"""


def _loaded_by(modules) -> str:
    code = PROBE.format(modules=modules)
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_kernels_package_imports_nothing_of_normlab_or_torch():
    assert "kernel" in MODULES and "guarded" in MODULES and "spirals" in MODULES
    assert _loaded_by([m for m in MODULES if m not in TORCH_MODULES]) == "[]"


def test_ps8s_probes_import_torch_and_nothing_of_normlab():
    loaded = _loaded_by(TORCH_MODULES)
    assert "'torch'" in loaded and "normlab" not in loaded
