"""The sandbox kernel's end of the socket to the grader, and the interrupts it must survive.

While a check runs, the student's code may call a trusted function (a `Ref` the check handed
it) or one of normlab's; neither lives in the kernel, so the call becomes a question to the
grader, which answers with its own copy and notes the call itself (so the kernel cannot hide
it). A call the grader only needs to hear of (NumPy's variance, `standins`) is a one-way note,
once per case.

The grader's timeout is a SIGINT. The channel turns it into a KeyboardInterrupt inside student
code only, never in the middle of the kernel's own send or receive: there it is held until the
channel operation is over (Python runs signal handlers in the main thread, whichever thread the
signal hit). Student code that replaces the handler can cut a frame; the grader then reads a
frame that fails its checksum and replaces the kernel (`wire.LostSync`).
"""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager

from . import protocol, wire


class Unavailable(RuntimeError):
    """A library or trusted function the grading sandbox does not provide (see the message)."""


# exceptions the grader may ask the kernel to raise by name; anything else is a RuntimeError
_RAISABLE = {
    exc.__name__: exc
    for exc in (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, ArithmeticError)
    + (FloatingPointError, OverflowError, NotImplementedError, RuntimeError, AttributeError)
    + (Unavailable,)
}


class Channel:
    """The kernel's end of the socket (`protocol.WIRE_TYPES` may cross), and its SIGINTs: a
    KeyboardInterrupt while student code runs, held during channel operations, dropped at any
    other time (a timeout that fired just as a reply left)."""

    def __init__(self, sock) -> None:
        self.sock = sock
        self.reader = wire.FrameReader(sock)
        self.request = None  # the id of the request being served, on every frame sent
        self.noted: set | None = None  # what was noted in the running case (None: no case)
        self.asked = 0  # questions asked, each one's seq
        self.student = False  # student code is running
        self.holding = 0  # channel operations in progress
        self.pending = False  # a SIGINT arrived while holding

    def _on_sigint(self, signum, frame) -> None:
        if self.student and self.holding:
            self.pending = True
        elif self.student:
            raise KeyboardInterrupt

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._on_sigint)

    @contextmanager
    def student_code(self):
        """Run student code: a SIGINT now interrupts it (the handler set again each time)."""
        self.install()
        self.pending, self.student = False, True
        try:
            yield
        finally:
            self.student = self.pending = False

    @contextmanager
    def held(self):
        """A channel operation: a SIGINT waits until it is over."""
        self.holding += 1
        try:
            yield
        finally:
            self.holding -= 1
            if not self.holding and self.pending and self.student:
                self.pending = False
                raise KeyboardInterrupt

    def receive(self):
        """The grader's next message; a broken channel exits (`LOST_SYNC`), a whole frame that
        does not decode raises (the notebook broke the kernel's harness)."""
        with self.held():
            try:
                payload = self.reader.read()
            except (EOFError, OSError, wire.WireError):
                os._exit(wire.LOST_SYNC)
            return wire.loads(payload, protocol.WIRE_TYPES)

    def send(self, message) -> None:
        """Send `message` (WireError if it does not encode); a send cut halfway exits."""
        data = wire.frame(wire.dumps(message, protocol.WIRE_TYPES))
        with self.held():
            try:
                self.sock.sendall(data)
            except BaseException:  # noqa: BLE001 (even a KeyboardInterrupt: the frame is cut)
                os._exit(wire.LOST_SYNC)


_channel: Channel | None = None  # the kernel's one channel, made by `connect`


def connect(sock) -> Channel:
    """Make the kernel's channel on `sock` (once, before any student code runs)."""
    global _channel
    if _channel is not None:
        raise RuntimeError("the kernel already has its channel")
    _channel = Channel(sock)
    return _channel


def ask(question: type, **fields):
    """Ask the grader a `protocol.QUESTIONS` question on the kernel's channel; its answer, or
    raise what it says."""
    link = _channel
    if link is None:
        raise Unavailable("this function is only available inside the grading sandbox")
    link.asked += 1
    with link.held():
        link.send(question(id=link.request, seq=link.asked, **fields))
        answer = link.receive()
    asked = (link.request, link.asked)
    if not isinstance(answer, protocol.Answer) or (answer.id, answer.seq) != asked:
        os._exit(wire.LOST_SYNC)  # not the answer to this question: out of step
    if answer.error is not None:
        ename, message = answer.error
        raise _RAISABLE.get(ename, RuntimeError)(message)
    return answer.value


def note(kind: str, name: str) -> None:
    """Tell the grader, once per case, that the running case called `name` (nothing outside
    the grading sandbox)."""
    link = _channel
    if link is None or link.noted is None or (kind, name) in link.noted:
        return
    link.noted.add((kind, name))
    link.send(protocol.Note(link.request, kind, name))
