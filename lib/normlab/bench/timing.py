"""Interleaved timing: every implementation is timed in every round, in a rotating order.

On a shared machine the background load drifts. Timing one implementation's
repeats back to back and then the next one's would fold that drift into their
ratio; interleaving spreads it over all of them, and the median of the rounds
ignores the rounds that a burst of other work spoiled.
"""

from __future__ import annotations

from collections.abc import Callable

from .impls import Impl
from .memory import minor_page_faults


def warm_up(impl: Impl, calls: int) -> None:
    for _ in range(calls):
        impl.prepare()
        impl.run()


def time_interleaved(
    impls: list[Impl], repeats: int, on_call: Callable[[], None] = lambda: None
) -> tuple[list[list[float]], list[list[int]] | None]:
    """Time `repeats` rounds of one call per implementation.

    Returns (seconds, faults): seconds[i] lists impls[i]'s times; faults[i] its minor
    page faults per call (None where the platform cannot count them).
    """
    seconds: list[list[float]] = [[] for _ in impls]
    faults: list[list[int]] = [[] for _ in impls]
    countable = minor_page_faults() is not None
    for round_ in range(repeats):
        shift = round_ % len(impls)
        for i in list(range(shift, len(impls))) + list(range(shift)):
            impl = impls[i]
            impl.prepare()  # untimed: e.g. torch.set_num_threads
            before = minor_page_faults()
            seconds[i].append(impl.timer(impl.run))
            if countable:
                faults[i].append(minor_page_faults() - before)
            on_call()
    return seconds, (faults if countable else None)
