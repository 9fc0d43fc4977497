"""`run_case`: call the student's code for one `Case`, under guards, and say what happened.

It runs in the student's own kernel (`normlab.grading.check`, with the trusted callables) and
in the grading sandbox's kernel (with `standins`). Guards, so one case can neither crash the
check nor leak into the next: array arguments are fresh copies, compared afterwards to see
what the call wrote into; warnings and `sys.stderr` are captured (nbgrader zeroes a test cell
that writes to stderr); exceptions, `SystemExit` included, become `Result.error`
(KeyboardInterrupt, a timeout, still interrupts); the tripwire records library calls; the
output is made plain data.
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
        with contextlib.suppress(Exception):  # an array-like that will not convert: its name
            return np.array(obj), _type_name(obj)
    return None, _type_name(obj)


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
    """Run one `Case` against `namespace` (name -> the student's object): a `Result`.

    `resolve(ref, made)` makes the case's `Ref`s callables (refs of one case share `made`);
    `owners` (name -> every graded function) tell the tripwire whose library call is whose."""
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
    given = {**dict(enumerate(args)), **kwargs}
    pristine = {key: a.copy() for key, a in given.items() if isinstance(a, np.ndarray)}

    tripwire = Tripwire(owner_codes(owners or namespace), case.target)
    output, output_type, error = None, "", None
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("always")
        try:
            if case.how == "probe":  # ps8: the probe returns plain data itself
                from .module_probes import PROBES  # imports torch: loaded only for a probe

                probe = PROBES[case.probe]
                with tripwire.active():
                    output, output_type = probe(target, *args, **kwargs), "dict"
            else:
                with tripwire.active():
                    returned = target(*args, **kwargs)
                output, output_type = _plain(returned)
        except (Exception, SystemExit) as err:  # noqa: BLE001 - the student's error is the result
            error = (_type_name(err), _message(err))

    # np.array_equal is False for arrays of two shapes (one the call resized in place)
    modified = [k for k, a in pristine.items() if not np.array_equal(given[k], a, equal_nan=True)]
    return Result(
        output=output,
        output_type=output_type,
        error=error,
        warnings=tuple((w.category.__name__, _message(w.message)) for w in caught),
        modified_inputs=tuple(modified),
        reference_calls=tuple(tripwire.calls),
        delegated=tuple(tripwire.delegated),
        probes=tuple(p for obj in refs.values() for p in getattr(obj, "probes", tuple)()),
    )
