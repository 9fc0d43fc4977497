"""normlab_sandbox is a leaf: importing all of it (as the grading kernel does) loads nothing
of normlab, so the kernel never holds the reference."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import normlab_sandbox

MODULES = sorted(p.stem for p in Path(normlab_sandbox.__file__).parent.glob("[a-z]*.py"))
PROBE = f"""
import sys
for name in {MODULES!r}:
    __import__("normlab_sandbox." + name)
loaded = sorted(m for m in sys.modules if m == "normlab" or m.startswith(("normlab.", "torch")))
print(loaded)
"""


def test_the_kernels_package_imports_nothing_of_normlab_or_torch():
    assert "kernel" in MODULES and "guarded" in MODULES
    done = subprocess.run(
        [sys.executable, "-I", "-c", PROBE], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
