"""The sandbox kernel: one student's notebook, run cell by cell in a jailed fork of the zygote.

It answers four requests from the grader, one at a time, each with exactly one reply:

    {"op": "cell", "id", "source"}           run a cell -> {"outputs", "error"}
    {"op": "names", "id", "names"}           which of these names the notebook defines
    {"op": "case", "id", "case", "names"}    run one check `Case` through the course's
                                             `run_case` -> {"result", "outputs"}
    {"op": "bye"}                            exit

While a case runs, the student's code may make the kernel ask the grader questions (see
`channel`); those frames come before the reply. SIGINT (the grader's cell timeout) is blocked
except while student code runs, so an interrupt can only stop student code; an interrupted
request replies {"interrupted": true}.

Standard library, IPython and NumPy only (this runs in the sandbox kernel).
"""

from __future__ import annotations

import os
import signal
import socket
import sys

from . import channel, jail, standins, wire
from .shell import CapturedStream, run_cell

_SIGINT = {signal.SIGINT}


class _StudentCode:
    """Let SIGINT in (as KeyboardInterrupt) only inside this block."""

    def __enter__(self):
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGINT)

    def __exit__(self, *exc):
        signal.pthread_sigmask(signal.SIG_BLOCK, _SIGINT)
        return False


def _drop_pending_interrupt() -> None:
    """A timeout that fired just as the previous reply left must not hit the next request."""
    while signal.SIGINT in signal.sigpending():
        signal.sigtimedwait(_SIGINT, 0)


def _run_case(shell, run_case, request) -> dict:
    user_ns = shell.user_ns
    namespace = {t: user_ns[n] for t, n in request["names"].items() if n in user_ns}
    shell.collector.reset()
    saved = sys.stdout, sys.stderr
    sys.stdout = CapturedStream(shell.collector, "stdout")
    sys.stderr = CapturedStream(shell.collector, "stderr")
    try:
        with _StudentCode():
            result = run_case(namespace, request["case"])
    finally:
        sys.stdout, sys.stderr = saved
    return {"result": result, "outputs": list(shell.collector.items)}


def handle(shell, run_case, request) -> dict:
    """The reply to one request (without its id)."""
    op = request.get("op")
    try:
        if op == "cell":
            with _StudentCode():
                return run_cell(shell, request["source"])
        if op == "names":
            return {"defined": [n for n in request["names"] if n in shell.user_ns]}
        if op == "case":
            return _run_case(shell, run_case, request)
    except KeyboardInterrupt:
        return {"interrupted": True}
    return {"failure": f"unknown request {op!r}"}


def serve(sock_fd: int, spec: dict, shell, run_case, registry: dict) -> None:
    """Jail this process, hide the libraries, then answer requests until told to stop."""
    signal.pthread_sigmask(signal.SIG_BLOCK, _SIGINT)
    try:
        jail.enter(spec, sock_fd)
    except Exception:  # noqa: BLE001 (no student code runs in a kernel that is not jailed)
        os._exit(wire.JAIL_FAILED)
    sock = socket.socket(fileno=sock_fd)
    channel.CHANNEL = link = channel.Channel(sock, registry)
    standins.install()
    sys.argv = ["grading-sandbox"]
    while True:
        try:
            request = link.receive()
        except (EOFError, OSError):
            os._exit(0)
        if not isinstance(request, dict) or request.get("op") == "bye":
            os._exit(0)
        _drop_pending_interrupt()
        reply = handle(shell, run_case, request)
        reply.update(op="done", id=request.get("id"))
        try:
            link.send(reply)
        except Exception as exc:  # noqa: BLE001 (a reply that will not encode fails its cell)
            link.send({"op": "done", "id": request.get("id"), "failure": f"reply: {exc}"[:500]})
