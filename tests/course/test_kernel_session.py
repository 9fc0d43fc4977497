"""A notebook's kernel across replacements: what a fresh kernel replays, what it stalls, and
where replacing stops (with kernels played by plain objects: no process)."""

from __future__ import annotations

import time

import pytest

from normlab.course.grader.kernel_process import Interrupted, KernelDied
from normlab.course.grader.kernel_session import MAX_REPLACEMENTS, KernelSession
from normlab.grading.verdict import CRASHED, TIMED_OUT
from normlab_sandbox import protocol
from normlab_sandbox.cases import Case

DIED = "the kernel exited with code 3 (os._exit or a fatal error)"


class Played:
    """A kernel that runs nothing: it logs its requests, keeps stalls as the real one does,
    and dies (or times out) when a case calls a function named in `crashes` (`loops`)."""

    def __init__(self, crashes=(), loops=()) -> None:
        self.log: list = []
        self.stalled: dict[str, tuple] = {}
        self.crashes, self.loops = crashes, loops
        self.cpu_used = 0.5
        self.peak_memory = 100 << 20

    def request(self, message, timeout: float, answer):
        self.log.append(message)
        if isinstance(message, protocol.RunCase) and message.case.target in self.crashes:
            raise KernelDied(DIED)
        if isinstance(message, protocol.RunCase) and message.case.target in self.loops:
            raise Interrupted([message.case.target])
        if isinstance(message, protocol.Stall):
            self.stalled.update(message.names)
        if isinstance(message, protocol.AskNames):
            stalled = {n: r for n, r in self.stalled.items() if n in message.names}
            return protocol.NamesDone(0, (), stalled)
        return protocol.StallDone(0)

    def close(self) -> None:
        pass


def cell(source: str) -> protocol.RunCell:
    return protocol.RunCell(0, source)


def case(target: str) -> protocol.RunCase:
    return protocol.RunCase(0, Case(target), {target: target})


def session_of(kernels: list[Played]) -> KernelSession:
    started = iter(kernels)
    return KernelSession(lambda: next(started), timeout=5.0)


def later() -> float:
    return time.monotonic() + 60


def test_a_crash_stalls_the_function_called_and_a_fresh_kernel_replays_the_rest():
    first, second = Played(crashes=("row_stats",)), Played()
    session = session_of([first, second])
    for source in ("import numpy as np", "def row_stats(x): ...", "def layer_norm(x): ..."):
        session.request(cell(source), 5.0, None)
    with pytest.raises(KernelDied, match="exited with code 3"):
        session.request(case("row_stats"), 5.0, None)
    with pytest.raises(KernelDied):  # nothing more on the lost kernel, until renewed
        session.request(case("layer_norm"), 5.0, None)
    session.renew(later())
    kinds = [protocol.RunCell] * 3 + [protocol.Stall]
    assert [type(m) for m in second.log] == kinds
    names = session.request(protocol.AskNames(0, ("row_stats", "layer_norm")), 5.0, None)
    crashed = f"row_stats stopped the kernel in an earlier cell ({DIED})"
    assert names.stalled == {"row_stats": (CRASHED, crashed)}
    assert session.request(case("layer_norm"), 5.0, None) == protocol.StallDone(0)
    assert session.summary() == {"kernel": "replaced", "reason": DIED, "replacements": [DIED]}
    session.close()
    assert session.cpu_used == 1.0 and session.peak_memory == 100 << 20


def test_an_interrupted_function_is_stalled_in_this_kernel_and_in_every_fresh_one():
    first, second = Played(loops=("row_stats",), crashes=("layer_norm",)), Played()
    session = session_of([first, second])
    session.request(cell("def row_stats(x): ..."), 5.0, None)
    with pytest.raises(Interrupted):
        session.request(case("row_stats"), 5.0, None)
    looped = "row_stats ran longer than the 5 s timeout in an earlier cell and is not called again"
    assert first.stalled == {"row_stats": (TIMED_OUT, looped)}
    with pytest.raises(KernelDied):
        session.request(case("layer_norm"), 5.0, None)
    session.renew(later())
    assert second.stalled == {
        "row_stats": (TIMED_OUT, looped),
        "layer_norm": (CRASHED, f"layer_norm stopped the kernel in an earlier cell ({DIED})"),
    }


def test_replacements_are_bounded_and_the_kernel_then_stays_dead():
    kernels = [Played(crashes=("f",)) for _ in range(MAX_REPLACEMENTS + 1)]
    session = session_of(kernels)
    for _ in range(MAX_REPLACEMENTS + 1):
        with pytest.raises(KernelDied):
            session.request(protocol.RunCase(0, Case("f"), {"f": "g"}), 5.0, None)  # never stalled
        session.renew(later())
    assert session.dead and f"replaced {MAX_REPLACEMENTS} times" in session.dead
    with pytest.raises(KernelDied, match="replaced"):
        session.request(cell("1"), 5.0, None)
    assert session.summary()["kernel"] == "died"


def test_a_fresh_kernel_that_fails_its_replay_ends_the_notebooks_kernels():
    class Relapsing(Played):
        def request(self, message, timeout, answer):
            raise KernelDied("the kernel died with SIGSEGV: it crashed (segmentation fault)")

    session = session_of([Played(crashes=("f",)), Relapsing()])
    session.request(cell("import crashy"), 5.0, None)
    with pytest.raises(KernelDied):
        session.request(case("f"), 5.0, None)
    session.renew(later())
    assert "failed re-running the earlier cells" in session.dead
    assert "SIGSEGV" in session.dead


def test_a_submission_that_cannot_go_in_has_no_kernel_from_the_start():
    def refuse():
        raise KernelDied("the submission folder is larger than 134217728 bytes")

    session = KernelSession(refuse, timeout=5.0)
    assert "larger than" in session.dead
    session.renew(later())
    session.close()
    assert session.summary()["kernel"] == "died"
