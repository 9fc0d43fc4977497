"""ps6_stability_speed's batteries: stable_variance's records and time_median's scripted runs.

time_median is timed with a scripted workload on a fake clock (`Ref`s to
`normlab.grading.scripted_timer`), so every expected median is exact.
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case, Ref

from ...grading.ps6_stability_speed import CHECKS
from ..random_inputs import F32, F64, each, messy


def _vcase(x, tag, label="", **meta) -> Case:
    label = label or f"x of shape {x.shape}, {x.dtype}"
    return Case("stable_variance", "call", (x,), tag=tag, label=label, meta=meta)


def _far(rng, setup, pair: int) -> list[Case]:
    shape, offset = setup
    far32 = (offset + rng.normal(size=shape)).astype(np.float32)
    far32[0, ...] = np.float32(offset + 0.5)  # a constant record: variance exactly 0
    label = f"float32 records at offset {offset:g} with spread 1, shape {shape}"
    return [_vcase(x, x.dtype.name, label, pair=pair) for x in (far32.astype(np.float64), far32)]


def _population(rng, shape) -> Case:
    return _vcase(messy(rng, shape), "pop")


def _dtype(rng, setup) -> Case:
    shape, dtype = setup
    return _vcase(messy(rng, shape, spread=(0.5, 5)).astype(dtype), "dtype")


def _tcase(durations, *, repeats=None, warmup=None, **meta) -> Case:
    given = {k: v for k, v in {"repeats": repeats, "warmup": warmup}.items() if v is not None}
    kwargs = {"clock": Ref("scripted_timer.clock", "t", tuple(durations)), **given}
    shown = {"repeats": 7, "warmup": 2} | given  # time_median's defaults
    label = (
        f"time_median(fn, repeats={shown['repeats']}, warmup={shown['warmup']}) with runs "
        f"taking {', '.join(f'{d:g}' for d in durations)} s"
    )
    workload = Ref("scripted_timer.workload", "t", tuple(durations))
    return Case("time_median", "call", (workload,), kwargs, label=label, meta=meta)


def _warmup_cases(rng, hidden):
    return [
        _tcase((5.0, 5.0, 5.0, 0.1, 0.1, 0.1), repeats=3, warmup=3, want=0.1, calls=6),
        # slow warm-up runs, and timed runs whose mean is not their median
        _tcase((2.0, 2.0, 0.3, 0.2, 0.4, 0.2, 0.3, 0.2, 0.3), want=0.3, calls=9),
        *([_tcase((1.0, 0.5, 0.5), repeats=3, warmup=0, want=0.5, calls=3)] if hidden else []),
    ]


def _median_cases(rng, hidden):
    cases = [_tcase((3.0, 0.2, 0.1, 9.0, 0.3, 0.25), repeats=5, warmup=1, want=0.25)]
    if hidden:
        cases += [_tcase((0.4, 0.1, 0.3, 0.2), repeats=4, warmup=0, want=0.25)]
    return cases


POPULATION = [(3, 4), (2, 3, 5)]
BATTERIES = {
    CHECKS.cell.far_from_zero: each(
        _far, [((4, 16), 1e4)], [((3, 5, 32), -2e4), ((8, 8), 1e4)], number="pair"
    ),
    CHECKS.cell.variance_population: each(_population, POPULATION, [(6, 6), (7,)]),
    CHECKS.cell.variance_dtype_and_shape: each(
        _dtype, [((3, 8), F32), ((2, 3, 4), F64)], [((5,), F32), ((2, 2, 2, 3), F32)]
    ),
    # the visible population cases, in both batteries (np.var shows on any input)
    CHECKS.cell.variance_by_hand: each(_population, POPULATION),
    CHECKS.cell.timing_warmup: _warmup_cases,
    CHECKS.cell.timing_median: _median_cases,
}
