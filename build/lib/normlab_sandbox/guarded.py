"""`run_case`: call the student's code for one `Case`, under guards, and say what happened.

The one function for that meaning: `normlab.grading.check` runs it in the student's own
kernel (handing it the grader's trusted callables), the grading sandbox's kernel runs it for
each case the grader sends (handing it stand-ins that ask the grader, see `standins`).

Guards, so that one case can neither crash the check nor leak into the next:
- every array argument is a fresh copy, and compared afterwards with a pristine
  copy to see whether the call wrote into it;
- warnings are captured (never printed: nbgrader zeroes a test cell that writes to
  stderr), and so is anything written to `sys.stderr`;
- exceptions, `SystemExit` included, become `Result.error`; KeyboardInterrupt
  (nbgrader's cell timeout) still interrupts;
- the tripwire records any library normalization the call reaches;
- the output is made plain data (arrays, scalars, tuples of those; a probe's dict of
  them, see `module_probes`).
"""

from __future__ import annotations

import contextlib
import io
import types
import warnings

import numpy as np

from .cases import Case, Ref, Result
from .tripwire import Tripwire

MAX_MESSAGE = 500


def _type_name(obj) -> str:
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _plain(obj):
    """(value, type name): the output made into data a judge can read."""
    if isinstance(obj, np.ndarray):
        return obj.copy(), "numpy.ndarray"
    if isinstance(obj, np.generic | bool | int | float | complex | str) or obj is None:
        return obj, _type_name(obj)
    if isinstance(obj, tuple | list):
        pairs = [_plain(item) for item in obj]
        names = ", ".join(name for _, name in pairs)
        return tuple(value for value, _ in pairs), f"{_type_name(obj)}({names})"
    if hasattr(obj, "__array__"):
        try:
            return np.array(obj), _type_name(obj)
        except Exception:  # noqa: BLE001 - an array-like that will not convert: keep its name
            pass
    return None, _type_name(obj)


def _probe(name: str):
    """ps8's probe `name` (`module_probes` imports torch: loaded only for a probe)."""
    from .module_probes import PROBES

    return PROBES[name]


def _resolve(value, refs: dict, resolve):
    if isinstance(value, Ref):
        return resolve(value, refs)
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _message(err: BaseException) -> str:
    text = str(err)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def owner_codes(owners: dict) -> dict:
    """{code object: name} of the student's graded functions among `owners` (name -> object)."""
    return {
        obj.__code__: name
        for name, obj in owners.items()
        if isinstance(getattr(obj, "__code__", None), types.CodeType)
    }


def run_case(namespace: dict, case: Case, resolve, owners: dict | None = None) -> Result:
    """Run one `Case` against `namespace` (name -> the student's object) and return a `Result`.

    `resolve(ref, made) -> callable` turns the case's `Ref`s into callables; refs of one case
    share `made` (a timer's workload and its clock). `owners` (name -> object: every graded
    function of the student's, the case's target among them) tells the tripwire whose library
    call is whose."""
    if case.target not in namespace:
        return Result(error=("NameError", f"name {case.target!r} is not defined"))
    target = namespace[case.target]
    if case.how == "get":
        output, output_type = _plain(target)
        return Result(output=output, output_type=output_type)
    if not callable(target):
        return Result(
            error=("TypeError", f"{case.target} is a {_type_name(target)}, not a function")
        )

    refs: dict = {}
    args = tuple(_resolve(a, refs, resolve) for a in case.args)
    kwargs = {k: _resolve(v, refs, resolve) for k, v in case.kwargs.items()}
    pristine = {i: a.copy() for i, a in enumerate(args) if isinstance(a, np.ndarray)}
    pristine.update({k: v.copy() for k, v in kwargs.items() if isinstance(v, np.ndarray)})

    tripwire = Tripwire(owner_codes(owners or namespace), case.target)
    output, output_type, error = None, "", None
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("always")
        try:
            if case.how == "probe":  # ps8: the probe returns plain data itself
                probe = _probe(case.probe)
                with tripwire.active():
                    output, output_type = probe(target, *args, **kwargs), "dict"
            else:
                with tripwire.active():
                    returned = target(*args, **kwargs)
                output, output_type = _plain(returned)
        except (Exception, SystemExit) as err:  # noqa: BLE001 - the student's error is the result
            error = (_type_name(err), _message(err))

    modified = []
    for key, before in pristine.items():
        after = args[key] if isinstance(key, int) else kwargs[key]
        same = after.shape == before.shape and np.array_equal(after, before, equal_nan=True)
        if not same:
            modified.append(key)
    probes = []
    for obj in refs.values():
        probes.extend(getattr(obj, "probes", lambda: ())())
    return Result(
        output=output,
        output_type=output_type,
        error=error,
        warnings=tuple((w.category.__name__, _message(w.message)) for w in caught),
        modified_inputs=tuple(modified),
        reference_calls=tuple(tripwire.calls),
        delegated=tuple(tripwire.delegated),
        probes=tuple(probes),
    )
