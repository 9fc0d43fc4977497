"""How the bench times fairly: interleaved rounds, and freed memory kept in the process.

On a shared machine the background load drifts. Timing one implementation's
repeats back to back and then the next one's would fold that drift into their
ratio; interleaving spreads it over all of them, and the median of the rounds
ignores the rounds that a burst of other work spoiled.

torch's CPU LayerNorm has no `out=` (its `.out` overload allocates and then copies),
and the reference `layer_norm` allocates its temporaries: each call asks malloc for
large blocks. glibc serves every block above 32 MiB with a fresh mmap and gives it
back on free, so each call first page-faults its memory in (the kernel zeroes every
page); a 128 MiB output costs more than the LayerNorm itself. That measures the
operating system, not LayerNorm.

`keep_freed_memory` tells glibc never to use mmap for a block and never to give the
heap back: a block freed by one call is reused by the next, as in a long-running
training process. It affects only this process, and only on glibc (Linux); the bench
records whether it applied, and the page faults per call of every implementation.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

from .impls import Impl

M_TRIM_THRESHOLD = -1  # glibc <malloc.h>
M_MMAP_MAX = -4


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


def keep_freed_memory() -> bool:
    """Turn off mmap and heap trimming in glibc's malloc; True when it applied."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # not glibc: macOS, Windows, musl
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, 2**31 - 1))


def minor_page_faults() -> int | None:
    """Minor page faults of this process so far (None where getrusage is missing)."""
    try:
        import resource
    except ImportError:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
