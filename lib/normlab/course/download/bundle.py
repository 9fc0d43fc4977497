"""The student download's bundle: the wheel, the released notebooks and a README, one zip
(`python -m normlab.course student-bundle _build/student/downloads`).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from normlab.grading import ASSIGNMENTS

from .recording import REPO
from .source import BuildError

BUNDLE = "normlab-course-student"
EPOCH_ZIP = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip file holds: the same bytes each time

BUNDLE_README = """\
The LayerNorm course: everything a student needs to do the problem sets.

  {wheel}
      normlab, the course's checks: the notebooks' test cells call them. Needs only numpy.
      It holds no answer: the visible checks run on recorded inputs and expectations.
  {notebooks}
      the problem sets, as released.

On your computer (Python 3.10 or newer), in this folder:

  python3 -m venv normlab-env
  normlab-env/bin/python -m pip install normlab-*.whl jupyterlab
  normlab-env/bin/jupyter lab

(on Windows: normlab-env\\Scripts\\ instead of normlab-env/bin/, and the wheel's full name).
ps8_in_a_model also needs torch; the CPU build is enough:

  normlab-env/bin/python -m pip install torch --index-url https://download.pytorch.org/whl/cpu

On a JupyterHub or in Colab, upload this folder (or the wheel and a notebook) and run a cell
with `%pip install normlab-*.whl` (with the path to the wheel), then restart the kernel.
The course site's page Exercises > Getting started says more.
"""


def write_bundle(downloads: Path) -> Path:
    """downloads/BUNDLE.zip: the one wheel there, the released notebooks and a README.txt, with
    fixed timestamps (the same inputs give the same bytes)."""
    wheels = sorted(downloads.glob("normlab-*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"expected one normlab wheel in {downloads}, found {wheels}")
    notebooks = [REPO / "exercises" / a / f"{a}.ipynb" for a in ASSIGNMENTS]
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        raise BuildError(f"released notebooks missing (run `make release`): {missing}")
    readme = BUNDLE_README.format(
        wheel=wheels[0].name, notebooks=", ".join(p.name for p in notebooks)
    )
    members = [("README.txt", readme.encode()), (wheels[0].name, wheels[0].read_bytes())]
    members += [(p.name, p.read_bytes()) for p in notebooks]
    path = downloads / f"{BUNDLE}.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for name, data in members:
            info = zipfile.ZipInfo(f"{BUNDLE}/{name}", date_time=EPOCH_ZIP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            bundle.writestr(info, data)
    return path
