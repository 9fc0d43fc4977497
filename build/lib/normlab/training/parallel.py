"""Run independent training runs side by side, one per CPU core.

Every run of the training chapter is seeded and independent of the others, so they can run in
separate processes and give the same results as one after the other (a test checks it). Each
worker uses one torch thread, as the chapter does: tiny tensors are fastest that way, and the
bits do not depend on how many threads there are. The pool is started once per Python process
(spawned, so a worker never inherits a half-initialised torch) and reused by every call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

_pools: dict[int, ProcessPoolExecutor] = {}


def _worker_setup() -> None:
    """One torch thread; and Ctrl-C (or a kernel's shutdown) is the parent's to handle."""
    import signal

    import torch

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)


def _pool(workers: int) -> ProcessPoolExecutor:
    if workers not in _pools:
        _pools[workers] = ProcessPoolExecutor(
            workers, mp_context=get_context("spawn"), initializer=_worker_setup
        )
    return _pools[workers]


def run_all(
    function: Callable, jobs: dict[Hashable, dict], workers: int | None = None
) -> dict[Hashable, object]:
    """{key: function(**kwargs)} for every {key: kwargs} of `jobs`, in `workers` processes.

    `workers` defaults to the number of CPUs; with one worker (or one job) everything runs
    here, in this process. `function` must be importable (a module's function, not a lambda).
    """
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    if workers == 1:
        return {key: function(**kwargs) for key, kwargs in jobs.items()}
    pool = _pool(workers)
    futures = {key: pool.submit(function, **kwargs) for key, kwargs in jobs.items()}
    return {key: future.result() for key, future in futures.items()}
