"""A notebook's kernel across replacements: one `Kernel` at a time, replaced when it is lost.

`NotebookRun` sends every request through a `KernelSession`. When a request loses the kernel
(it died, ignored the interrupt, or lost its place on the channel: `KernelDied`, the kernel
already killed), that request fails with the reason, and the function it was calling (a check
case's target) is stalled as crashed. Before the next cell, `renew` starts a fresh kernel that
replays what the lost one had been sent: the cells that ran to their end and the stalls, in
order. So a function that crashes its kernel costs the cells that call it, as one that raises
would, and every other function keeps its points. A notebook gets `MAX_REPLACEMENTS`; after
that, or when a fresh kernel fails while it replays, the kernel is dead for the rest of the
notebook, as is one that never started.
"""

from __future__ import annotations

import time

from normlab.grading.verdict import CRASHED, TIMED_OUT
from normlab_sandbox import protocol

from .answers import Answers
from .kernel_process import Interrupted, KernelDied

MAX_REPLACEMENTS = 4
STALL_TIMEOUT_S = 10.0


class KernelSession:
    """The kernel of one notebook's run; `start()` makes a ready `Kernel` (or raises
    KernelDied when the submission cannot go in: the session is then dead from the start).
    `timeout` is the cell timeout, for the reasons' wording."""

    def __init__(self, start, timeout: float) -> None:
        self.start, self.timeout = start, timeout
        self.kernel = None
        self.journal: list = []  # the requests a fresh kernel replays
        self.lost: str | None = None  # why the current kernel was lost (renew replaces it)
        self.dead: str | None = None  # why there is no kernel for the rest of the notebook
        self.replaced: list[str] = []  # the reasons, one per replacement
        self.cpu_used = 0.0  # CPU seconds of the kernels closed so far
        self.peak_memory: int | None = None  # the largest peak resident memory among them
        try:
            self.kernel = start()
        except KernelDied as refused:
            self.dead = refused.reason

    def request(self, message, timeout: float, answer):
        """`Kernel.request` on the current kernel, keeping the journal (see the module)."""
        if self.dead or self.lost:
            raise KernelDied(self.dead or self.lost)
        try:
            reply = self.kernel.request(message, timeout, answer)
        except Interrupted as stopped:
            late = f"ran longer than the {self.timeout:g} s timeout in an earlier cell"
            late = {n: (TIMED_OUT, f"{n} {late} and is not called again") for n in stopped.running}
            if late:
                self.journal.append(protocol.Stall(0, late))
                try:
                    self.kernel.request(self.journal[-1], STALL_TIMEOUT_S, Answers())
                except Interrupted:
                    pass  # it was not stopped by this: the next request will tell
                except KernelDied as died:
                    self.lost = died.reason
            raise
        except KernelDied as died:
            self.lost = died.reason
            # the notebook's name for the function the request called (a case's target)
            name = message.case_function() if isinstance(message, protocol.RunCase) else None
            if name:
                crashed = f"{name} stopped the kernel in an earlier cell ({died.reason})"
                self.journal.append(protocol.Stall(0, {name: (CRASHED, crashed)}))
            raise
        if isinstance(message, protocol.RunCell):
            self.journal.append(message)
        return reply

    def renew(self, over: float) -> None:
        """Replace a lost kernel (its time counts against the notebook's deadline `over`,
        not against a cell's timeout)."""
        if self.dead or not self.lost:
            return
        lost, self.lost = self.lost, None
        self.close()
        if len(self.replaced) >= MAX_REPLACEMENTS:
            self.dead = f"{lost}; the kernel was replaced {MAX_REPLACEMENTS} times already"
            return
        self.replaced.append(lost)
        try:
            self.kernel = self.start()
        except KernelDied as refused:
            self.dead = refused.reason
            return
        for entry in self.journal:
            left = over - time.monotonic()
            try:
                if left <= 0:
                    raise KernelDied("the notebook's budget ran out")
                self.kernel.request(entry, min(self.timeout, left), Answers())
            except (Interrupted, KernelDied) as failed:
                why = failed.reason if isinstance(failed, KernelDied) else "a cell timed out"
                self.dead = f"{lost}; a fresh kernel failed re-running the earlier cells ({why})"
                self.close()
                return

    def close(self) -> None:
        """Close the current kernel (the CPU of every kernel is then in `cpu_used`, the
        largest peak memory in `peak_memory`)."""
        if self.kernel is not None:
            self.kernel.close()
            self.cpu_used += self.kernel.cpu_used or 0.0
            peaks = [p for p in (self.peak_memory, self.kernel.peak_memory) if p is not None]
            self.peak_memory = max(peaks, default=None)
            self.kernel = None

    def summary(self) -> dict:
        """For the notebook's record: "ok", "replaced" (and why, each time) or "died"."""
        state = "died" if self.dead else "replaced" if self.replaced or self.lost else "ok"
        reasons = [*self.replaced, *([self.lost] if self.lost else [])]
        reason = self.dead or (reasons[-1] if reasons else None)
        return {"kernel": state, "reason": reason, "replacements": reasons}
