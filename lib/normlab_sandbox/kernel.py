"""The sandbox kernel: one student's notebook, run cell by cell, in a process of its own.

    python -I -m normlab_sandbox.kernel FD

The grader (`normlab.course.kernel_process`) starts it, inside bubblewrap under strict
isolation, with the environment it chose, and talks to it on the socket FD. First the setup:

    {"op": "setup", "uid", "workdir", "files", "limits"}, then `files` frames
    {"op": "file", "path", "data"}                              -> {"op": "ready"}

in that order: the uid (given when the grader runs as root: the grading slot's own
unprivileged uid, taken before anything else), the private working folder with the
submission's files (its notebooks left out: the autograded copy holds the restored hidden
tests), then the resource limits. Then it answers four requests, one at a time, each with
exactly one reply:

    {"op": "cell", "id", "source"}           run a cell -> {"outputs", "error"}
    {"op": "names", "id", "names"}           which of these names the notebook defines, and
                                             which of them are stalled (below)
    {"op": "case", "id", "case", "names"}    run one check `Case` through `run_case`
                                             -> {"result", "outputs"}
    {"op": "bye"}                            exit

While a case runs, the student's code may make the kernel ask the grader questions (see
`channel`); those frames come before the reply. SIGINT (the grader's timeout) is blocked
except while student code runs, so an interrupt can only stop student code; an interrupted
case replies {"interrupted": true}. A function of the notebook that was running when an
interrupt stopped it is *stalled* until the notebook defines that name again: the grader
calls it no more, so a function that never returns costs one timeout, not one per check.

Standard library, IPython and NumPy only (this runs in the sandbox kernel).
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import sys
import types

from . import channel, standins, wire
from .cases import WIRE_TYPES
from .guarded import run_case
from .shell import captured, make_shell, run_cell

_SIGINT = {signal.SIGINT}
RLIMITS = {
    "memory_bytes": resource.RLIMIT_AS,
    "cpu_seconds": resource.RLIMIT_CPU,
    "file_bytes": resource.RLIMIT_FSIZE,
    "open_files": resource.RLIMIT_NOFILE,
    "processes": resource.RLIMIT_NPROC,
}
PR_SET_PDEATHSIG = 1


class SetupError(RuntimeError):
    """The kernel could not set itself up; it must not run student code."""


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


# --- setup --------------------------------------------------------------------------------


def die_with_parent() -> None:
    """Linux: be killed when the grading worker dies (under bubblewrap, --die-with-parent
    does the same for the whole sandbox)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    parent = os.getppid()
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(0)


def become(uid: int) -> None:
    """Take `uid` (and gid `uid`) with no supplementary groups; there is no way back."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid):
        raise SetupError(f"the kernel could not take uid {uid}")


def set_limits(limits: dict) -> None:
    """Lower the soft and hard limits (never raise them); no core dumps."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for key, value in limits.items():
        which = RLIMITS[key]
        _, hard = resource.getrlimit(which)
        cap = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        resource.setrlimit(which, (cap, cap))


def receive_files(link: channel.Channel, workdir: str, count: int) -> None:
    """Write the `count` files the grader sends next under `workdir` (paths stay inside)."""
    root = os.path.realpath(workdir)
    for _ in range(count):
        frame = link.receive()
        if not isinstance(frame, dict) or frame.get("op") != "file":
            raise SetupError("the grader sent something else than a file")
        path = os.path.realpath(os.path.join(root, frame["path"]))
        if not path.startswith(root + os.sep):
            raise SetupError(f"a file outside the working folder: {frame['path']!r}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(frame["data"])


def set_up(link: channel.Channel) -> None:
    """Apply the grader's setup message (see the module docstring)."""
    setup = link.receive()
    if not isinstance(setup, dict) or setup.get("op") != "setup":
        raise SetupError("the grader's first message is not the setup")
    die_with_parent()
    if setup.get("uid") is not None:
        become(int(setup["uid"]))
    workdir = setup["workdir"]
    os.makedirs(workdir, mode=0o700, exist_ok=True)
    receive_files(link, workdir, int(setup["files"]))
    os.chdir(workdir)
    set_limits(setup["limits"])


# --- requests -----------------------------------------------------------------------------


class Stalled:
    """The notebook's functions a timeout stopped, by name, while the name still holds them."""

    def __init__(self) -> None:
        self.functions: dict[str, object] = {}

    def note(self, error: BaseException, user_ns: dict, names=()) -> None:
        """Mark `names` and every notebook function on `error`'s traceback as stalled."""
        codes = {
            value.__code__: name
            for name, value in list(user_ns.items())
            if type(value) is types.FunctionType
        }
        tb = error.__traceback__
        while tb is not None:
            name = codes.get(tb.tb_frame.f_code)
            if name is not None:
                self.functions[name] = user_ns[name]
            tb = tb.tb_next
        for name in names:
            if name in user_ns:
                self.functions[name] = user_ns[name]

    def among(self, names, user_ns: dict) -> list[str]:
        """Which of `names` still hold a stalled function."""
        return [n for n in names if n in self.functions and user_ns.get(n) is self.functions[n]]


def _serve_case(shell, stalled: Stalled, request) -> dict:
    """Run one check case through `run_case` on the notebook's objects."""
    user_ns = shell.user_ns
    namespace = {t: user_ns[n] for t, n in request["names"].items() if n in user_ns}
    with captured(shell):
        try:
            with _StudentCode():
                result = run_case(namespace, request["case"], standins.resolve)
        except KeyboardInterrupt as stopped:
            stalled.note(stopped, user_ns, [request["names"].get(request["case"].target)])
            raise
    return {"result": result, "outputs": list(shell.collector.items)}


def _serve_cell(shell, stalled: Stalled, source: str) -> dict:
    with _StudentCode():
        reply = run_cell(shell, source)
    error = shell.last_execution_result.error_in_exec
    if isinstance(error, KeyboardInterrupt):
        stalled.note(error, shell.user_ns)
    return reply


def handle(shell, stalled: Stalled, request) -> dict:
    """The reply to one request (without its id)."""
    op = request.get("op")
    try:
        if op == "cell":
            return _serve_cell(shell, stalled, request["source"])
        if op == "names":
            names = request["names"]
            return {
                "defined": [n for n in names if n in shell.user_ns],
                "stalled": stalled.among(names, shell.user_ns),
            }
        if op == "case":
            return _serve_case(shell, stalled, request)
    except KeyboardInterrupt:
        return {"interrupted": True}
    return {"failure": f"unknown request {op!r}"}


def serve(link: channel.Channel) -> None:
    """Answer requests until told to stop (or the grader is gone)."""
    shell, stalled = make_shell(), Stalled()
    standins.install()
    sys.argv = ["grading-sandbox"]
    link.send({"op": "ready"})
    while True:
        try:
            request = link.receive()
        except (EOFError, OSError):
            os._exit(0)
        if not isinstance(request, dict) or request.get("op") == "bye":
            os._exit(0)
        _drop_pending_interrupt()
        reply = handle(shell, stalled, request)
        reply.update(op="done", id=request.get("id"))
        try:
            link.send(reply)
        except Exception as exc:  # noqa: BLE001 (a reply that will not encode fails its cell)
            link.send({"op": "done", "id": request.get("id"), "failure": f"reply: {exc}"[:500]})


def main() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, _SIGINT)
    link = channel.connect(socket.socket(fileno=int(sys.argv[1])), WIRE_TYPES)
    try:
        set_up(link)
    except Exception as exc:  # noqa: BLE001 (no student code runs in a kernel not set up)
        try:
            link.send({"op": "setup failed", "reason": f"{type(exc).__name__}: {exc}"[:500]})
        finally:
            os._exit(wire.SETUP_FAILED)
    try:
        serve(link)
    finally:
        os._exit(wire.HARNESS_FAILED)


if __name__ == "__main__":
    main()
