"""The sandbox kernel: one student's notebook, run cell by cell, in a process of its own.

    python -I -m normlab_sandbox.kernel FD

This docstring is the one description of the protocol between the grader (its end is
`normlab.course.kernel_process`, its replacements `normlab.course.kernel_session`) and this
kernel, on the socket FD.

Framing (`wire`): every message is one frame, a 16-byte header (a magic, the length, the CRC32
of the payload, the CRC32 of the header) and a payload of plain data (no pickle). Both ends read
with a `wire.FrameReader`, which keeps the bytes of a partial frame when a deadline passes, so
a timeout never leaves the stream mid-message; a frame cut by its sender and followed by
another fails a checksum and reads as `LostSync`, never as a garbled length.

Setup. The grader starts the kernel (inside bubblewrap under strict isolation) with the
environment it chose and sends

    {"op": "setup", "uid", "workdir", "files", "limits", "torch"}, then `files` frames
    {"op": "file", "path", "data"}                              -> {"op": "ready"}

in that order: the uid (given when the grader runs as root: the grading slot's own
unprivileged uid, taken before anything else), the private working folder with the
submission's files (its notebooks left out: the autograded copy holds the restored hidden
tests), then the resource limits. "torch" (absent: false) is the assignment's, chosen by the
grader: true gives the notebook the real torch (ps8 grades a torch module), false the
stand-in (see `standins`); normlab is a stand-in either way.

Requests, one at a time, each with an "id"; every frame the kernel sends while it serves one
carries that id, and exactly one of them is the reply {"op": "done", "id", ...}:

    {"op": "cell", "source"}                 run a cell -> {"outputs", "error"}
    {"op": "names", "names"}                 which of these names the notebook defines, and
                                             which are stalled -> {"defined", "stalled":
                                             {name: why}}
    {"op": "stall", "names": {name: why}}    stall the objects these names hold now -> {}
                                             (`why`: [verdict category, message])
    {"op": "case", "case", "names"}          run one check `Case` through `run_case`
                                             -> {"result", "outputs"}
    {"op": "bye"}                            exit (no reply)

Questions. While a case runs, the student's code may reach what lives only in the grader
(see `channel` and `standins`); these frames come before the reply:

    {"op": "ask", "id", "seq", "kind", ...}  -> the grader's {"op": "answer", "id", "seq",
                                                "value" | "error"}
    {"op": "note", "id", "kind", "name"}     a call the grader notes; no answer

The grader paces its answers: past a small allowance of CPU per request, it answers no faster
than keeps its own CPU within a few percent of the request's time; after an interrupt it
refuses every question at once.

Interrupts. The grader's timeout is a SIGINT, a KeyboardInterrupt in student code only, never
in the middle of the kernel's own send or receive (`channel.Interrupts`). An interrupted cell or
case replies {"interrupted": true, "running": [names]}, the notebook's functions that were
running; the grader stalls them (a `stall` request): a stalled function is not called again
until the notebook defines that name again, so a function that never returns costs one
timeout, not one per check. No reply `GRACE_S` after the interrupt: the grader kills the kernel.

Replacement. A kernel that dies (`os._exit`, a signal, the CPU limit), ignores the interrupt,
breaks its harness or loses its place on the channel (a frame that fails its checksum, a frame
out of turn or with another id) is killed, and the request fails with the reason. Before the
next cell the grader starts a fresh one and replays what the lost one had been sent: the cells
that ran to their end and the stalls, in order, then a stall of the function that was being
called (a case's target) as crashed, with the reason. Every other function is graded as before;
a notebook gets a few replacements at most.

The kernel exits with HARNESS_FAILED (70) when its own request loop fails, SETUP_FAILED (71)
when it could not set itself up, LOST_SYNC (72) when its channel broke (a send cut halfway, a
frame it cannot read, an answer to another question, a message that is no request).

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
    """Lower the soft and hard limits (never raise them); no core dumps. The CPU limit's hard
    one is a second later, so that the kernel ends with SIGXCPU (the reason a student reads),
    not with the SIGKILL that Linux sends first when both are reached at once."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for key, value in limits.items():
        which = RLIMITS[key]
        _, hard = resource.getrlimit(which)
        finite = hard != resource.RLIM_INFINITY
        cap = min(int(value), hard) if finite else int(value)
        later = cap + 1 if key == "cpu_seconds" else cap
        resource.setrlimit(which, (cap, min(later, hard) if finite else later))


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


def set_up(link: channel.Channel) -> bool:
    """Apply the grader's setup message (see the module docstring); whether the notebook
    gets the real torch."""
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
    return setup.get("torch", False) is True


# --- requests -----------------------------------------------------------------------------


REQUESTS = ("cell", "names", "stall", "case")


def running_functions(error: BaseException, user_ns: dict, names=()) -> list[str]:
    """The notebook's functions on `error`'s traceback, then `names` (those defined)."""
    codes = {
        value.__code__: name
        for name, value in list(user_ns.items())
        if type(value) is types.FunctionType
    }
    found = []
    tb = error.__traceback__
    while tb is not None:
        name = codes.get(tb.tb_frame.f_code)
        if name is not None and name not in found:
            found.append(name)
        tb = tb.tb_next
    return found + [n for n in names if n in user_ns and n not in found]


class Stalled:
    """The notebook's objects the grader stalled, by name, while the name still holds them."""

    def __init__(self) -> None:
        self.functions: dict[str, tuple[object, object]] = {}

    def mark(self, names: dict, user_ns: dict) -> None:
        for name, why in names.items():
            if name in user_ns:
                self.functions[name] = (user_ns[name], why)

    def among(self, names, user_ns: dict) -> dict:
        """{name: why} for those of `names` that still hold a stalled object."""
        held = {n: self.functions[n] for n in names if n in self.functions}
        return {n: reason for n, (obj, reason) in held.items() if user_ns.get(n) is obj}


def _serve_case(shell, link: channel.Channel, request) -> dict:
    """Run one check case through `run_case` on the notebook's objects."""
    user_ns, case = shell.user_ns, request["case"]
    namespace = {t: user_ns[n] for t, n in request["names"].items() if n in user_ns}
    link.noted = set()
    try:
        with captured(shell), link.interrupts.student_code():
            result = run_case(namespace, case, standins.resolve)
    except KeyboardInterrupt as stopped:
        target = request["names"].get(case.target)
        return {"interrupted": True, "running": running_functions(stopped, user_ns, [target])}
    finally:
        link.noted = None
    return {"result": result, "outputs": list(shell.collector.items)}


def _serve_cell(shell, link: channel.Channel, source: str) -> dict:
    with link.interrupts.student_code():
        reply = run_cell(shell, source)
    error = shell.last_execution_result.error_in_exec
    if isinstance(error, KeyboardInterrupt):
        reply.update(interrupted=True, running=running_functions(error, shell.user_ns))
    return reply


def handle(shell, link: channel.Channel, stalled: Stalled, request: dict) -> dict:
    """The reply to one request (without its op and id)."""
    op = request["op"]
    try:
        if op == "cell":
            return _serve_cell(shell, link, request["source"])
        if op == "case":
            return _serve_case(shell, link, request)
        if op == "stall":
            stalled.mark(request["names"], shell.user_ns)
            return {}
        names = request["names"]
        return {
            "defined": [n for n in names if n in shell.user_ns],
            "stalled": stalled.among(names, shell.user_ns),
        }
    except KeyboardInterrupt:  # it landed outside the student's own code
        return {"interrupted": True, "running": []}


def serve(link: channel.Channel, real_torch: bool = False) -> None:
    """Answer requests until told to stop (or the grader is gone)."""
    shell, stalled = make_shell(), Stalled()
    standins.install(real_torch)
    if real_torch:
        from .module_probes import import_torchs_lazy_parts

        import_torchs_lazy_parts()
    sys.argv = ["grading-sandbox"]
    link.send({"op": "ready"})
    while True:
        request = link.receive()
        op = request.get("op") if isinstance(request, dict) else None
        if op == "bye":
            os._exit(0)
        if op not in REQUESTS or "id" not in request:
            os._exit(wire.LOST_SYNC)  # no request: the two ends are out of step
        link.request = request["id"]
        reply = {**handle(shell, link, stalled, request), "op": "done", "id": link.request}
        try:
            link.send(reply)
        except wire.WireError as exc:  # a reply that will not encode fails its cell
            link.send({"op": "done", "id": link.request, "failure": f"reply: {exc}"[:500]})


def main() -> None:
    link = channel.connect(socket.socket(fileno=int(sys.argv[1])), WIRE_TYPES)
    link.interrupts.install()
    try:
        real_torch = set_up(link)
    except Exception as exc:  # noqa: BLE001 (no student code runs in a kernel not set up)
        try:
            link.send({"op": "setup failed", "reason": f"{type(exc).__name__}: {exc}"[:500]})
        finally:
            os._exit(wire.SETUP_FAILED)
    try:
        serve(link, real_torch)
    finally:
        os._exit(wire.HARNESS_FAILED)


if __name__ == "__main__":
    main()
