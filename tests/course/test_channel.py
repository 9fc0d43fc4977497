"""The channel between grader and kernel survives a cut at every byte, over a socketpair.

A message is cut at every offset (inside a header, inside a body, between two messages), on the
grader's read side by a deadline, and on the sender's side by a send that stops halfway and is
followed by the next frame. The next call must get a clean answer or a clean "kernel lost"
(`KernelDied`, after which the session replaces the kernel), never a garbled length and never a
message out of turn taken as a reply. No process is started: the kernel's end is scripted.
"""

from __future__ import annotations

import signal
import socket
import threading
import time

import pytest

from normlab.course.grader import kernel_process
from normlab.course.grader.kernel_process import Interrupted, Kernel, KernelDied
from normlab_sandbox import protocol, wire
from normlab_sandbox.protocol import WIRE_TYPES

NOTE = protocol.Note(1, "numpy", "numpy.var")
DONE = protocol.CellDone(1, [{"output_type": "stream", "name": "stdout"}], False)
NEXT = protocol.CellDone(2, [], False)
REQUEST = protocol.RunCell(0, "row_stats(x)")


def frame(message) -> bytes:
    return wire.frame(wire.dumps(message, WIRE_TYPES))


class _NoProcess:
    """In place of the kernel's process: never signalled (see `Scripted`), 'killed' at once."""

    pid = 0

    def wait(self, timeout=None) -> int:
        return -signal.SIGKILL


class Scripted(Kernel):
    """A `Kernel` whose other end of the socket the test writes; SIGINT sets `interrupted`."""

    def __init__(self) -> None:
        ours, self.theirs = socket.socketpair()
        super().__init__(_NoProcess(), ours, "", via_bwrap=False, cpu=None)
        self.interrupted = threading.Event()

    def _signal(self, signum: int) -> None:
        if signum == signal.SIGINT:
            self.interrupted.set()

    def kill(self) -> None:
        pass

    def script(self, first: bytes, after_interrupt: bytes = b"") -> threading.Thread:
        """Send `first` now and `after_interrupt` once the grader interrupts."""

        def run() -> None:
            self.theirs.sendall(first)
            if after_interrupt and self.interrupted.wait(10.0):
                self.theirs.sendall(after_interrupt)

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def shut(self) -> None:
        self.sock.close()
        self.theirs.close()


def outcome(kernel: Scripted, notes: list, timeout: float, ident: int = 1):
    """What the grader's next request gets: the reply, Interrupted, or KernelDied."""
    try:
        return kernel.request(
            REQUEST, timeout, lambda question: notes.append(question) or (None, None)
        )
    except (Interrupted, KernelDied) as stopped:
        return stopped


@pytest.fixture
def short_grace(monkeypatch):
    """For a kernel that never completes its frame: killed soon after the interrupt."""
    monkeypatch.setattr(kernel_process, "GRACE_S", 0.05)


def test_a_deadline_at_any_byte_loses_nothing_on_either_end():
    """The reader both ends use keeps a partial frame across a deadline."""
    stream = frame(NOTE) + frame(DONE)
    for cut in range(len(stream) + 1):
        left, right = socket.socketpair()
        with left, right:
            reader = wire.FrameReader(right)
            left.sendall(stream[:cut])
            got = []
            with pytest.raises(TimeoutError):
                while True:
                    got.append(wire.loads(reader.read(time.monotonic() + 0.001), WIRE_TYPES))
            left.sendall(stream[cut:])
            while len(got) < 2:
                got.append(wire.loads(reader.read(time.monotonic() + 5.0), WIRE_TYPES))
            assert got == [NOTE, DONE] and not reader.buffer, cut


def test_a_cut_frame_followed_by_another_is_lost_sync_never_a_frame():
    first, second = frame(NOTE), frame(DONE)
    for cut in range(1, len(first)):
        left, right = socket.socketpair()
        with left, right:
            left.sendall(first[:cut] + second)
            reader = wire.FrameReader(right)
            with pytest.raises((wire.LostSync, TimeoutError)):  # a cut body may wait for more
                reader.read(time.monotonic() + 0.01)


def test_the_grader_cut_by_its_deadline_at_any_byte_gets_the_clean_reply():
    stream = frame(NOTE) + frame(DONE)
    for cut in range(len(stream) + 1):
        kernel, notes = Scripted(), []
        thread = kernel.script(stream[:cut], stream[cut:])
        got = outcome(kernel, notes, timeout=0.005)
        thread.join()
        if isinstance(got, Interrupted):  # the reply came after the interrupt: intact
            assert kernel.interrupted.is_set() and got.running == [], cut
        else:
            assert got == DONE, (cut, got)
        assert notes == [NOTE], cut  # the note was read exactly once, whole
        kernel.theirs.sendall(frame(NEXT))
        assert outcome(kernel, [], timeout=5.0) == NEXT, cut  # the channel is still in step
        kernel.shut()


@pytest.mark.parametrize("cut_in", ["note", "done"])
def test_a_send_cut_at_any_byte_and_followed_by_the_next_frame_loses_the_kernel_cleanly(
    short_grace, cut_in
):
    """A kernel whose send is cut (its handler replaced) then sends its next frame: the grader
    reads lost sync (or waits for bytes that never come and kills it), never garbage."""
    message = NOTE if cut_in == "note" else DONE
    cut_frame = frame(message)
    before = b"" if cut_in == "note" else frame(NOTE)
    follower = frame(DONE if cut_in == "note" else protocol.Interrupted(1))
    clean = lost = 0
    for cut in range(len(cut_frame) + 1):
        kernel, notes = Scripted(), []
        kernel.script(before + cut_frame[:cut] + follower).join()
        got = outcome(kernel, notes, timeout=0.02)
        if cut in (0, len(cut_frame)):  # between two frames: nothing was cut
            assert isinstance(got, (protocol.CellDone, Interrupted)), (cut, got)
            clean += 1
        else:
            assert isinstance(got, KernelDied), (cut, got)
            assert "lost its place" in got.reason or "ignored the interrupt" in got.reason, cut
            assert "out of turn" not in got.reason and "announced" not in got.reason, cut
            with pytest.raises(KernelDied):  # nothing more is read from a lost channel
                kernel.request(REQUEST, 1.0, lambda question: (None, None))
            lost += 1
        kernel.shut()
    assert (clean, lost) == (2, len(cut_frame) - 1)


def test_a_frame_with_another_id_is_never_taken_as_the_reply():
    kernel = Scripted()
    kernel.script(frame(NEXT)).join()  # id 2 while request 1 is served: out of turn
    got = outcome(kernel, [], timeout=1.0)
    assert isinstance(got, KernelDied) and "out of turn" in got.reason
    kernel.shut()


def test_answers_are_paced_once_they_cost_the_grader_cpu(monkeypatch):
    """A kernel that asks question after question gets its answers no faster than keeps the
    grader's CPU within ANSWER_SHARE of the request's time, past a small allowance."""
    monkeypatch.setattr(kernel_process, "ANSWER_ALLOWANCE_S", 0.0)
    kernel, asked = Scripted(), 20
    questions = b"".join(
        frame(protocol.AskLibrary(1, n, "normlab.row_stats")) for n in range(asked)
    )

    def busy(question) -> tuple:
        spin = time.process_time() + 0.002
        while time.process_time() < spin:
            pass
        return None, None

    kernel.script(questions + frame(DONE)).join()
    started, cpu = time.monotonic(), time.process_time()
    assert kernel.request(REQUEST, 30.0, busy) == DONE
    wall, spent = time.monotonic() - started, time.process_time() - cpu
    assert spent <= kernel_process.ANSWER_SHARE * wall + 0.01, (spent, wall)
    kernel.shut()
