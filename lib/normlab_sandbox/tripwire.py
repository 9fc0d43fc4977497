"""The tripwire: notice when a student's function reaches a library normalization.

Calling normlab's reference, torch's normalizations or autograd (directly, or through a name
captured before grading: `ln = normlab.layer_norm`) earns the function no points. Names can be
rebound, so while the student's function runs a profile hook (`sys.setprofile`) watches which
code actually executes, and records the entry into any function of normlab's package but the
graders' own (`_NORMLAB_EXEMPT`; the graders' private reference has other file names), torch's
normalizations and autograd (`_TORCH_PY`, `_TORCH_C`), and NumPy's variance and standard
deviation, which ps6 asks the student to replace (NumPy 2's layout and NumPy 1's). Each entry is
a label ("normlab.layer_norm", "torch.layer_norm"); judges decide which matter. ps8's probes also
look below Python (`op_label`: an aten op a dispatch mode sees; `node_label`: a backward node in
the output's graph). Code that removes the hook is reported as "tripwire removed". In the
student's kernel this is a precaution; the course's grader runs it where the student cannot edit
the results.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

TRIPWIRE_REMOVED = "tripwire removed"
# normlab's package folder. Not asked of the import system: finding `normlab` would import
# it (its __init__ loads the reference), and in the grading kernel `normlab` is a stand-in.
# The two packages are installed side by side from lib/ (one wheel, or one editable
# checkout), so normlab's folder is this package's sibling; tests/grading/test_guards.py
# checks it is the folder `import normlab` loads.
NORMLAB_DIR = Path(__file__).resolve().parents[1] / "normlab"

_NORMLAB_PREFIXES = tuple({str(NORMLAB_DIR) + os.sep, os.path.realpath(NORMLAB_DIR) + os.sep})
# normlab's subpackages that are the graders' own code, not a normalization a student could
# reuse: the checks (`normlab.grading`), their answer key and the grader (`normlab.course`).
# A test checks that every other module of normlab is watched.
_NORMLAB_EXEMPT = ("grading", "answer_key", "course")

_FUNCTIONAL = ("layer_norm", "batch_norm", "rms_norm", "group_norm", "instance_norm")
_TORCH_PY = {("nn/functional.py", f): f"torch.nn.functional.{f}" for f in _FUNCTIONAL} | {
    ("nn/modules/normalization.py", "forward"): "torch.nn.LayerNorm/RMSNorm.forward",
    ("nn/modules/batchnorm.py", "forward"): "torch.nn.BatchNorm.forward",
    ("_tensor.py", "backward"): "torch.Tensor.backward",
    ("autograd/__init__.py", "backward"): "torch.autograd.backward",
    ("autograd/__init__.py", "grad"): "torch.autograd.grad",
}
# torch's C functions of the same names, and the native kernels they call
_TORCH_C = {*_FUNCTIONAL, "native_layer_norm", "native_batch_norm", "native_group_norm"}
# the same kernels seen from below Python: a dispatch mode sees their aten ops, and the
# output's autograd graph keeps their backward node, whatever route reached them
_TORCH_OPS = _TORCH_C | {
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training",
    "_batch_norm_with_update",
    "_fused_rms_norm",
}
_TORCH_NODES = {
    "NativeLayerNormBackward0": "native_layer_norm",
    "NativeBatchNormBackward0": "native_batch_norm",
    "NativeGroupNormBackward0": "native_group_norm",
    "FusedRmsNormBackward0": "_fused_rms_norm",
}
_NUMPY_PY = {
    ("_core/_methods.py", "_var"): "numpy.var",
    ("_core/_methods.py", "_std"): "numpy.std",
    ("lib/_nanfunctions_impl.py", "nanvar"): "numpy.nanvar",
    ("lib/_nanfunctions_impl.py", "nanstd"): "numpy.nanstd",
    ("core/_methods.py", "_var"): "numpy.var",  # NumPy 1
    ("core/_methods.py", "_std"): "numpy.std",
    ("lib/nanfunctions.py", "nanvar"): "numpy.nanvar",
    ("lib/nanfunctions.py", "nanstd"): "numpy.nanstd",
}


# code objects labelled as the library function they stand in for (the sandbox's NumPy stand-ins)
LABELLED: dict[object, str] = {}


def label_for(filename: str, name: str) -> str | None:
    """The label of a function defined in `filename` and named `name`, or None."""
    path = filename.replace(os.sep, "/")
    for prefix in _NORMLAB_PREFIXES:
        if filename.startswith(prefix):
            relative = filename[len(prefix) :].replace(os.sep, "/")
            if relative.split("/", 1)[0] in _NORMLAB_EXEMPT:
                return None
            return f"normlab.{name} (normlab/{relative})"
    for package, table in (("/torch/", _TORCH_PY), ("/numpy/", _NUMPY_PY)):
        if package in path:
            for (tail, func), label in table.items():
                if func == name and path.endswith(package + tail):
                    return label
    return None


def op_label(name: str) -> str | None:
    """The label of torch's aten op `name` (its overload packet's name), or None."""
    return f"torch.ops.aten.{name}" if name in _TORCH_OPS else None


def node_label(name: str) -> str | None:
    """The label of an autograd node of type `name` in an output's graph, or None."""
    op = _TORCH_NODES.get(name)
    return f"torch.ops.aten.{op} ({name} in the output's graph)" if op else None


def delegated(label: str, owner: str | None, target: str) -> bool:
    """Did the call of `target` reach `label` only through `owner`, another graded function
    whose library twin it is (the student's row_stats calling normlab.row_stats, inside
    layer_norm)? Then it is `owner`'s reuse, not `target`'s."""
    if owner is None or owner == target:
        return False
    return label == f"normlab.{owner}" or label.startswith(f"normlab.{owner} ")


def owner_of(frame, owners: dict) -> str | None:
    """The innermost graded function (`owners`: code -> name) on the stack from `frame` up."""
    while frame is not None and frame.f_code not in owners:
        frame = frame.f_back
    return None if frame is None else owners[frame.f_code]


class Tripwire:
    """Records library normalizations entered while active: `calls`, the `target`'s own, and
    `delegated` (see `delegated`; `owners`: {code object: name} of the graded functions)."""

    def __init__(self, owners: dict | None = None, target: str = "") -> None:
        self.calls: list[str] = []
        self.delegated: list[str] = []
        self.owners, self.target = owners or {}, target
        self._labels: dict[object, str | None] = {}

    def _label(self, code) -> str | None:
        if code not in self._labels:
            self._labels[code] = LABELLED.get(code) or label_for(code.co_filename, code.co_name)
        return self._labels[code]

    def _record(self, label: str, frame=None) -> None:
        owner = owner_of(frame, self.owners) if frame is not None and self.owners else None
        found = self.delegated if delegated(label, owner, self.target) else self.calls
        if label not in found:
            found.append(label)

    def __call__(self, frame, event, arg):
        if event == "call":
            label = self._label(frame.f_code)
            if label is not None:
                caller = frame.f_back
                # record entry points only, not the library's own inner calls
                if caller is None or self._label(caller.f_code) is None:
                    self._record(label, caller)
        elif event == "c_call":
            name = getattr(arg, "__name__", None)
            if name in _TORCH_C and str(getattr(arg, "__module__", "")).startswith("torch"):
                if self._label(frame.f_code) is None:
                    self._record(f"torch.{name}", frame)

    @contextmanager
    def active(self):
        """Watch the code run inside the `with` block; restores the previous hook after."""
        previous = sys.getprofile()
        sys.setprofile(self)
        try:
            yield self
        finally:
            if sys.getprofile() is not self:
                self._record(TRIPWIRE_REMOVED)
            sys.setprofile(previous)
