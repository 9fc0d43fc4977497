"""ps6's scripted timer: a workload whose calls take scripted times on a fake clock.

A check hands the student's `time_median(fn, repeats, warmup, clock)` the workload and the clock
as `Ref("scripted_timer.workload" | "scripted_timer.clock", group, params)`; refs of one group
share one `ScriptedTimer`, so the answer is exact and the judge reads its `probes`. It computes
no normalization, so the student download carries it as it is.
"""

from __future__ import annotations

from normlab_sandbox.cases import Ref

PREFIX = "scripted_timer."


class ScriptedTimer:
    """A workload and a fake clock: call i of the workload takes durations[i] seconds (beyond
    the script, `overrun`); `probes()`: how often it ran and the clock was read."""

    overrun = 1000.0

    def __init__(self, durations) -> None:
        self.durations = tuple(float(d) for d in durations)
        self.now = 0.0
        self.calls = 0
        self.reads = 0

    def workload(self, *args, **kwargs):
        step = self.durations[self.calls] if self.calls < len(self.durations) else self.overrun
        self.calls += 1
        self.now += step

    def clock(self) -> float:
        self.reads += 1
        return self.now

    def probes(self):
        return (("calls", self.calls), ("clock_reads", self.reads))


def resolve(ref: Ref, made: dict):
    """The workload or the clock `ref` names; one `ScriptedTimer` per group, through `made`."""
    timer = made.setdefault(("scripted_timer", ref.group, ref.params), ScriptedTimer(ref.params))
    return getattr(timer, ref.name.removeprefix(PREFIX))
