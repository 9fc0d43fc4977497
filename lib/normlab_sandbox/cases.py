"""What crosses between building a check, running it, and judging it: `Case`, `Ref`, `Result`.

The student's code may run somewhere else than the verdict is reached (`normlab.grading`), so
only plain data crosses: NumPy arrays, Python scalars, strings, tuples and dicts of those, and
`Ref`, which names a trusted function by a string. `WIRE_TYPES` names the three for `wire`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ref:
    """A trusted callable, named by a string and resolved where `run_case` runs.

    Used where a check must hand the student's code a function: the correct
    LayerNorm or a planted wrong one for ps3's witness, a scripted clock for ps6's
    timer. `name` picks the callable (from `normlab.answer_key.trusted`), `params`
    (numbers) configure it; refs of one case that share `group` share one object
    (a timer's workload and its clock).
    """

    name: str
    group: str = ""
    params: tuple = ()


@dataclass(frozen=True)
class Case:
    """One question put to the student's namespace.

    `how` is "call" (call `target` with `args` and `kwargs`), "get" (read the
    value `target`) or "probe" (hand `target`, a class, to the probe named `probe`,
    `module_probes.PROBES[probe](target, *args, **kwargs)`: ps8's torch module). `tag`
    and `meta` tell the judge what the case is for (e.g. tag "changed", meta
    {"record": (0, 3)}); `label` describes it to a student.
    """

    target: str
    how: str = "call"
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    tag: str = ""
    label: str = ""
    meta: dict = field(default_factory=dict)
    probe: str = ""

    def __post_init__(self) -> None:
        if self.how not in ("call", "get", "probe"):
            raise ValueError(f"Case.how must be 'call', 'get' or 'probe'; got {self.how!r}")
        if (self.how == "probe") != bool(self.probe):
            raise ValueError("a probe names its probe, and only a probe does")


@dataclass(frozen=True)
class Result:
    """What came back from running one `Case`.

    output           the return value (or the value read), made plain: arrays are
                     copied, tuples and lists become tuples, array-likes (a torch
                     tensor) become arrays; a probe's dict of plain data as it is;
                     None when the call raised
    output_type      the type of what came back, e.g. "numpy.ndarray" or
                     "tuple(numpy.ndarray, numpy.ndarray)"
    error            (exception type name, message) when the call raised, else None
    warnings         ((category name, message), ...) raised during the call
    modified_inputs  positions (int) or keyword names (str) of array arguments the
                     call wrote into
    reference_calls  library normalizations the call reached, e.g. "normlab.layer_norm"
    delegated        those it reached only through another of the student's graded functions
                     (the student's row_stats calling normlab.row_stats, inside layer_norm):
                     that function's reuse, not this one's (`tripwire.delegated`)
    probes           ((name, value), ...) observations of trusted helpers (a timer's
                     number of calls)
    """

    output: object = None
    output_type: str = ""
    error: tuple[str, str] | None = None
    warnings: tuple[tuple[str, str], ...] = ()
    modified_inputs: tuple = ()
    reference_calls: tuple[str, ...] = ()
    delegated: tuple[str, ...] = ()
    probes: tuple[tuple[str, object], ...] = ()

    def probe(self, name: str, default=None):
        return next((value for key, value in self.probes if key == name), default)


# the dataclasses the wire between grader and sandbox kernel rebuilds (see wire.py)
WIRE_TYPES = {cls.__name__: cls for cls in (Case, Ref, Result)}
