"""What the student's code finds in the sandbox kernel where normlab, torch and the checks'
trusted helpers would be (the grader's side: `normlab.course.grader.answers`).

- `normlab.*`: every name is a `LibraryFunction`, which asks the grader (answered, and noted as
  reuse, only while a check runs); the reference is never loaded into the kernel.
- `normlab.grading.*`: `GradingStandIn`s: the checks run in the grader. `use_assignment` and
  `summary` do nothing; `my_variant()` returns the submitter's numbers from the setup (ps1);
  `try_it` prints what the call gave, as plain text (a submitted output is never replayed);
  `check` does nothing in a student's cell and raises `UnreadTestCell` in an autograded test
  cell, which the grader sends here only when it cannot read it: it fails closed, scoring 0.
- `torch`: the import succeeds, any use raises `Unavailable` and the grader hears of it, unless
  the setup gives the real torch (ps8: `install(real_torch=True)`; the kernel never decides).
- NumPy's `var`, `std`, `nanvar`, `nanstd` (and `ndarray.var`, `.std`) compute here, but their
  first call in a case is noted to the grader (ps6 asks for a variance by hand), with the
  tripwire labels of the functions they wrap.
- `resolve(ref, made)`: a `RefProxy`, whose calls the grader answers with the real object.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

import numpy

from . import protocol, student_variant, tripwire
from .channel import Unavailable, ask, note

STAND_IN_PACKAGES = ("normlab", "torch")


class _StandIn:
    """A dotted name inside the sandbox; its attributes are stand-ins of the same kind (each
    kind says what it is: `shown`)."""

    def __init__(self, path: str) -> None:
        self._path = path

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(self)(f"{self._path}.{name}")

    def __repr__(self) -> str:
        return f"<{self._path}: {self.shown}>"


case_owners: dict = {}  # the running case's graded functions: code object -> name


class LibraryFunction(_StandIn):
    """`normlab.<path>` inside the sandbox: calls are answered (and noted) by the grader, told
    which of the notebook's graded functions made the call (`tripwire.owner_of`)."""

    shown = "answered by the grader while a check runs"

    def __call__(self, *args, **kwargs):
        owner = tripwire.owner_of(sys._getframe(1), case_owners)
        return ask(protocol.AskLibrary, path=self._path, args=args, kwargs=kwargs, owner=owner)


class RefProxy:
    """A trusted callable handed to the student's code by a check, living in the grader (which
    reports the real object's probes: a proxy has none)."""

    def __init__(self, ref) -> None:
        self._ref = ref

    def __call__(self, *args, **kwargs):
        return ask(protocol.AskRef, ref=self._ref, args=args, kwargs=kwargs)

    def __repr__(self) -> str:
        name = self._ref.name
        shown = name.rsplit(".", 1)[-1] if name.startswith("scripted_timer.") else "norm_fn"
        return f"<function {shown}>"


def resolve(ref, made: dict):
    """Stand-in for `normlab.answer_key.trusted.resolve`: a proxy, not the trusted object."""
    return RefProxy(ref)


class UnreadTestCell(RuntimeError):
    """`check` called in an autograded test cell the grader could not read (see the module)."""


test_cell: str | None = None  # the grade_id of the test cell running now (`RunCell.test_cell`)


def _check(*args, **kwargs) -> None:
    if test_cell is not None:
        raise UnreadTestCell(
            f"test cell {test_cell!r} calls check in a form the grader does not read "
            '(check("<grade_id>", name, ..., hidden=..., seed=...) with names and constants '
            "only): it was not judged and scores 0. This is a bug in the course's notebook: "
            "please report it."
        )


def try_it(function, *args, **kwargs):
    """The sandbox's `try_it`: the call, as in the student's kernel, shown as plain text."""
    name = getattr(function, "__name__", "the function")
    try:
        returned = function(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 (shown, as the student's kernel shows it)
        print(f"✗ {name} raised {type(exc).__name__}: {exc}")
        return None
    if returned is None:
        print(f"{name} returned None: is its body written, ending with return?")
    else:
        print(repr(returned)[:2000])
    return None


_variant: dict = {}  # the grader's setup: {"student", "variant", "claimed"} (ps1)


_GRADING = {
    "use_assignment": lambda *a, student="", **k: _variant.update(claimed=str(student).strip()),
    "my_variant": lambda: student_variant.my_variant(_variant),
    "reference_norms": lambda *args, **kwargs: {},
    "summary": lambda *args, **kwargs: None,
    "check": _check,
    "try_it": try_it,
}


class GradingStandIn(_StandIn):
    """`normlab.grading.<path>` inside the sandbox: the grader runs the checks, not this cell."""

    shown = "run by the grader while grading"

    def __getitem__(self, key):
        return GradingStandIn(f"{self._path}[{key!r}]")

    def __iter__(self):
        return iter(())

    def __call__(self, *args, **kwargs):
        found = _GRADING.get(self._path.rsplit(".", 1)[-1])
        return found(*args, **kwargs) if found else None


class StandInModule(types.ModuleType):
    """A module every attribute of which is a stand-in (see the module docstring)."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        path = f"{self.__name__}.{name}"
        if self.__name__.split(".")[0] == "torch":
            return TorchStandIn(path)
        if path == "normlab.grading" or path.startswith("normlab.grading."):
            return GradingStandIn(path)
        return LibraryFunction(path)


class TorchStandIn(_StandIn):
    """`torch.<path>` inside the sandbox: using it raises; the grader notes which name."""

    shown = "not available while grading"

    def __call__(self, *args, **kwargs):
        ask(protocol.AskTorch, path=self._path)
        raise Unavailable(f"{self._path}: torch is not available while grading")


class StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `packages` (see `install`) and their submodules as `StandInModule`s."""

    def __init__(self, packages) -> None:
        self.packages = tuple(packages)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.packages:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return StandInModule(spec.name)  # the import system sets __path__ from the spec

    def exec_module(self, module) -> None:
        pass


def _numpy_stand_in(label: str, original):
    """`original` (NumPy's variance or standard deviation), noted to the grader once per case;
    not again from inside another stand-in (np.std calls np.var)."""

    def stand_in(*args, **kwargs):
        if not _inside:
            note("numpy", label)
        _inside.append(label)
        try:
            return original(*args, **kwargs)
        finally:
            _inside.pop()

    stand_in.__name__ = stand_in.__qualname__ = original.__name__
    stand_in.__code__ = stand_in.__code__.replace(co_name=original.__name__)  # one per label
    tripwire.LABELLED[stand_in.__code__] = label
    return stand_in


_inside: list[str] = []  # the stand-ins running now


def install(real_torch: bool = False, student: str = "", variant: dict | None = None) -> None:
    """Forget every loaded normlab or torch module and serve stand-ins from now on (torch's
    only when not `real_torch`); note NumPy's variances; `variant` is `my_variant()`'s."""
    from numpy._core import _methods
    from numpy.lib import _nanfunctions_impl

    _variant.update(student=student, variant=variant)
    packages = tuple(p for p in STAND_IN_PACKAGES if not (real_torch and p == "torch"))
    for name in list(sys.modules):
        if name.split(".")[0] in STAND_IN_PACKAGES:
            del sys.modules[name]
    sys.meta_path.insert(0, StandInFinder(packages))
    # NumPy's var, std, nanvar and nanstd, everywhere NumPy looks them up (`ndarray.var` finds
    # `_methods._var`); NumPy 2's private modules: the `course` extra requires numpy>=2
    _methods._var = _numpy_stand_in("numpy.var", _methods._var)
    _methods._std = _numpy_stand_in("numpy.std", _methods._std)
    for name in ("nanvar", "nanstd"):
        stand_in = _numpy_stand_in(f"numpy.{name}", getattr(_nanfunctions_impl, name))
        setattr(_nanfunctions_impl, name, stand_in)
        setattr(numpy, name, stand_in)
