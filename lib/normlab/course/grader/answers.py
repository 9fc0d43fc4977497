"""The grader's answers to the sandbox kernel's questions, and what the questions reveal
(the kernel's side: `normlab_sandbox.standins`).

- "ref": a trusted callable the running check handed over, answered with the grader's own
  object, made per case as `run_case` makes it, so its probes are the grader's observations.
  A `Ref` of another case is refused and noted.
- "library": a normlab function; while a case runs, a reference function is answered and
  noted as reuse (with the in-kernel tripwire's label); anything else is refused and noted.
  Between cases nothing is answered: the reference is not there to precompute with.
- "numpy" (a note): NumPy's var, std, nanvar or nanstd, computed in the kernel.
- "torch": refused; a call to one of its normalizations or autograd is noted. (ps8's kernels
  have the real torch and never ask: `normlab_sandbox.module_probes` finds reuse there.)

The notes are made here, in the grader, so the kernel cannot hide them.
"""

from __future__ import annotations

import inspect
import types

import normlab
from normlab.answer_key import trusted
from normlab_sandbox import protocol
from normlab_sandbox.cases import Case, Ref
from normlab_sandbox.tripwire import delegated, label_for

# the reference's functions, which a case's call of them gets answered (and noted as reuse)
ANSWERED = frozenset(n for n in normlab.__all__ if inspect.isfunction(getattr(normlab, n)))
NUMPY_NOTED = frozenset(["numpy.var", "numpy.std", "numpy.nanvar", "numpy.nanstd"])
TORCH_NOTED = ("norm", "Norm", "backward", "grad")
MAX_NOTES = 50


def _error(ename: str, message: str) -> tuple[None, tuple[str, str]]:
    """An answer that makes the kernel raise `ename(message)`."""
    return None, (ename, message[:500])


class Answers:
    """Answers one kernel's questions; `begin_case`/`end_case` bracket each check case."""

    def __init__(self) -> None:
        self.case: Case | None = None
        self.made, self.objects, self.calls, self.delegated = {}, {}, [], []

    def begin_case(self, case: Case) -> None:
        """Make the case's trusted objects (as `run_case` would) and start taking notes."""
        self.case, self.made, self.calls, self.delegated = case, {}, [], []
        refs = [v for v in (*case.args, *case.kwargs.values()) if isinstance(v, Ref)]
        self.objects = {ref: trusted.resolve(ref, self.made) for ref in refs}

    def end_case(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple]:
        """(reference calls noted, those delegated to another graded function, probes of the
        case's trusted objects); stop the case."""
        probes = tuple(p for obj in self.made.values() for p in getattr(obj, "probes", tuple)())
        calls, delegated = tuple(self.calls), tuple(self.delegated)
        self.case, self.made, self.objects, self.calls, self.delegated = None, {}, {}, [], []
        return calls, delegated, probes

    def note(self, label: str, owner: str | None = None) -> None:
        """Note a library call of the running case (`owner`: the graded function that made
        it, as the kernel says; see `tripwire.delegated`)."""
        if self.case is None:
            return
        found = self.delegated if delegated(label, owner, self.case.target) else self.calls
        if label not in found and len(found) < MAX_NOTES:
            found.append(label)

    def __call__(self, question) -> tuple[object, tuple[str, str] | None]:
        """(value, None), or (None, (exception name, message)) for the kernel to raise; a
        `protocol.Note` is only noted."""
        if isinstance(question, protocol.AskRef):
            return self._ref(question.ref, question.args, question.kwargs)
        if isinstance(question, protocol.AskLibrary):
            return self._library(question.path, question.args, question.kwargs, question.owner)
        if isinstance(question, protocol.Note):  # no answer goes back
            if question.kind == "numpy" and question.name in NUMPY_NOTED:
                self.note(question.name)
            return None, None
        path = question.path  # protocol.AskTorch
        if any(word in path.rsplit(".", 1)[-1] for word in TORCH_NOTED):
            self.note(path)
        return _error("Unavailable", f"{path}: torch is not available while grading")

    def _ref(self, ref, args, kwargs):
        if not isinstance(ref, Ref) or ref not in self.objects:
            name = ref.name if isinstance(ref, Ref) else "?"
            self.note(f"normlab.{name} (a trusted function kept from an earlier check)")
            return _error("Unavailable", "this function belongs to another check")
        return _call(self.objects[ref], args, kwargs)

    def _library(self, path: str, args, kwargs, owner: str | None = None):
        parts = path.split(".")
        fn = normlab
        for part in parts[1:]:
            fn = None if part.startswith("_") else getattr(fn, part, None)
        if parts[0] != "normlab" or fn is None:
            self.note(path)
            return _error("AttributeError", f"{path} does not exist")
        code = fn.__code__ if isinstance(fn, types.FunctionType) else None
        label = label_for(code.co_filename, code.co_name) if code else None
        self.note(label or path, owner)
        if self.case is None:
            return _error(
                "Unavailable",
                f"{path}: normlab's reference is not available to notebook cells while "
                "grading (the grader checks your own functions)",
            )
        if len(parts) != 2 or parts[1] not in ANSWERED:
            return _error("Unavailable", f"{path} is not available while grading")
        return _call(fn, args, kwargs)


def _call(fn, args, kwargs) -> tuple[object, tuple[str, str] | None]:
    if not callable(fn):
        return _error("TypeError", f"{type(fn).__name__} object is not callable")
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # noqa: BLE001 (the reference's own errors go back as they are)
        return _error(type(exc).__name__, str(exc))
