"""ps6_stability_speed's batteries: stable_variance's records and time_median's scripted runs.

time_median is timed with a scripted workload on a fake clock (`Ref`s to
`normlab.grading.scripted_timer`), so every expected median is exact.
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case, Ref

from ...grading.ps6_stability_speed import CHECKS
from ..random_inputs import messy


def _vcase(x, tag, label="", **meta) -> Case:
    label = label or f"x of shape {x.shape}, {x.dtype}"
    return Case("stable_variance", "call", (x,), tag=tag, label=label, meta=meta)


def _far_cases(rng, hidden):
    setups = [((4, 16), 1e4)] + ([((3, 5, 32), -2e4), ((8, 8), 1e4)] if hidden else [])
    cases = []
    for pair, (shape, offset) in enumerate(setups):
        far32 = (offset + rng.normal(size=shape)).astype(np.float32)
        far32[0, ...] = np.float32(offset + 0.5)  # a constant record: variance exactly 0
        label = f"float32 records at offset {offset:g} with spread 1, shape {shape}"
        cases.append(_vcase(far32.astype(np.float64), "float64", label, pair=pair))
        cases.append(_vcase(far32, "float32", label, pair=pair))
    return cases


def _population_cases(rng, hidden):
    shapes = [(3, 4), (2, 3, 5)] + ([(6, 6), (7,)] if hidden else [])
    return [_vcase(messy(rng, s), "pop") for s in shapes]


def _by_hand_cases(rng, hidden):
    """The visible population cases, in both batteries (np.var shows on any input)."""
    return _population_cases(rng, False)


def _dtype_cases(rng, hidden):
    specs = [((3, 8), np.float32), ((2, 3, 4), np.float64)]
    if hidden:
        specs += [((5,), np.float32), ((2, 2, 2, 3), np.float32)]
    return [_vcase(messy(rng, s, spread=(0.5, 5)).astype(t), "dtype") for s, t in specs]


def _tcase(durations, *, repeats=None, warmup=None, tag="", **meta) -> Case:
    given = {k: v for k, v in {"repeats": repeats, "warmup": warmup}.items() if v is not None}
    kwargs = {"clock": Ref("scripted_timer.clock", "t", tuple(durations)), **given}
    shown = {"repeats": 7, "warmup": 2} | given  # time_median's defaults
    label = (
        f"time_median(fn, repeats={shown['repeats']}, warmup={shown['warmup']}) with runs "
        f"taking {', '.join(f'{d:g}' for d in durations)} s"
    )
    workload = Ref("scripted_timer.workload", "t", tuple(durations))
    return Case("time_median", "call", (workload,), kwargs, tag=tag, label=label, meta=meta)


def _warmup_cases(rng, hidden):
    cases = [
        _tcase((5.0, 5.0, 5.0, 0.1, 0.1, 0.1), repeats=3, warmup=3, want=0.1, calls=6),
        # slow warm-up runs, and timed runs whose mean is not their median
        _tcase((2.0, 2.0, 0.3, 0.2, 0.4, 0.2, 0.3, 0.2, 0.3), want=0.3, calls=9),
    ]
    if hidden:
        cases += [_tcase((1.0, 0.5, 0.5), repeats=3, warmup=0, want=0.5, calls=3)]
    return cases


def _median_cases(rng, hidden):
    cases = [_tcase((3.0, 0.2, 0.1, 9.0, 0.3, 0.25), repeats=5, warmup=1, want=0.25)]
    if hidden:
        cases += [_tcase((0.4, 0.1, 0.3, 0.2), repeats=4, warmup=0, want=0.25)]
    return cases


BATTERIES = {
    CHECKS.cell.far_from_zero: _far_cases,
    CHECKS.cell.variance_population: _population_cases,
    CHECKS.cell.variance_dtype_and_shape: _dtype_cases,
    CHECKS.cell.variance_by_hand: _by_hand_cases,
    CHECKS.cell.timing_warmup: _warmup_cases,
    CHECKS.cell.timing_median: _median_cases,
}
