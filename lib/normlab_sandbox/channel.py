"""The sandbox kernel's line to the grader, for the questions only the grader can answer.

While a check runs, the student's code may call a trusted function: one the check handed it
(a `Ref`, e.g. the correct LayerNorm for ps3's witness) or, reusing the reference, one of
normlab's. Neither lives in the sandbox kernel. The call becomes a question to the grader
("call normlab.layer_norm with these arrays"), which computes the answer with its own copy,
notes the call itself (so the kernel cannot hide it), and sends back data or an error.

Standard library and NumPy only (this runs in the sandbox kernel).
"""

from __future__ import annotations

import builtins

from . import wire

# exceptions the grader may ask the kernel to raise by name; anything else is a RuntimeError
_RAISABLE = {
    name: getattr(builtins, name)
    for name in (
        "ValueError",
        "TypeError",
        "IndexError",
        "KeyError",
        "ZeroDivisionError",
        "ArithmeticError",
        "FloatingPointError",
        "OverflowError",
        "NotImplementedError",
        "RuntimeError",
        "AttributeError",
    )
}


class Unavailable(RuntimeError):
    """A library or trusted function the grading sandbox does not provide (see the message)."""


class Channel:
    """The kernel's end of the socket; `registry` names the dataclasses that may cross."""

    def __init__(self, sock, registry: dict) -> None:
        self.sock = sock
        self.registry = registry

    def receive(self):
        return wire.recv_message(self.sock, self.registry)

    def send(self, message) -> None:
        wire.send_message(self.sock, message, self.registry)

    def ask(self, kind: str, **fields):
        """Send a question to the grader and wait for its answer; raise what it says to."""
        self.send({"op": "ask", "kind": kind, **fields})
        answer = self.receive()
        if not isinstance(answer, dict) or answer.get("op") != "answer":
            raise Unavailable("the grader sent no answer")
        if "error" in answer:
            ename, message = answer["error"]
            if ename == "Unavailable":
                raise Unavailable(message)
            raise _RAISABLE.get(ename, RuntimeError)(message)
        return answer.get("value")


_channel: Channel | None = None  # the kernel's one channel, made by `connect`


def connect(sock, registry: dict) -> Channel:
    """Make the kernel's channel on `sock` (once, before any student code runs)."""
    global _channel
    if _channel is not None:
        raise RuntimeError("the kernel already has its channel")
    _channel = Channel(sock, registry)
    return _channel


def ask(kind: str, **fields):
    """`Channel.ask` on the kernel's channel."""
    if _channel is None:
        raise Unavailable("this function is only available inside the grading sandbox")
    return _channel.ask(kind, **fields)
