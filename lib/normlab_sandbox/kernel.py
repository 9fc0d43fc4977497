"""The sandbox kernel: one student's notebook, run cell by cell, in a process of its own.

    python -I -m normlab_sandbox.kernel FD

It serves the grader's requests (`protocol`) on the socket FD: frames (`wire`), interrupts
(`channel.Channel`; an interrupted cell or case answers the notebook's functions that were
running, which the grader then stalls), pacing and kills (`normlab.course.grader.kernel_process`)
and replacement (`kernel_session`) are described where they are done; its exit statuses, in
`wire` (HARNESS_FAILED, SETUP_FAILED, LOST_SYNC).
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import sys
import traceback
import types

from . import channel, guarded, protocol, standins, wire
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


def die_with_parent() -> None:
    """Linux: be killed when the grading worker dies (bwrap's --die-with-parent does the same
    for the whole sandbox)."""
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
    one is a second later, so the kernel ends with SIGXCPU (the reason a student reads), not
    the SIGKILL Linux sends first when both are reached at once."""
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
        file = link.receive()
        if not isinstance(file, protocol.File):
            raise SetupError("the grader sent something else than a file")
        path = os.path.realpath(os.path.join(root, file.path))
        if not path.startswith(root + os.sep):
            raise SetupError(f"a file outside the working folder: {file.path!r}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(file.data)


def set_up(link: channel.Channel) -> protocol.Setup:
    """Apply the grader's `protocol.Setup` (see `protocol`), and return it."""
    setup = link.receive()
    if not isinstance(setup, protocol.Setup):
        raise SetupError("the grader's first message is not the setup")
    die_with_parent()
    if setup.uid is not None:
        become(int(setup.uid))
    os.makedirs(setup.workdir, mode=0o700, exist_ok=True)
    receive_files(link, setup.workdir, int(setup.files))
    os.chdir(setup.workdir)
    set_limits(setup.limits)
    return setup


def running_functions(error: BaseException, user_ns: dict, names=()) -> tuple[str, ...]:
    """The notebook's functions on `error`'s traceback, then `names` (those defined)."""
    codes = {
        value.__code__: name
        for name, value in list(user_ns.items())
        if type(value) is types.FunctionType
    }
    frames = traceback.walk_tb(error.__traceback__)
    found = dict.fromkeys(codes[f.f_code] for f, _ in frames if f.f_code in codes)
    return (*found, *(n for n in names if n in user_ns and n not in found))


class Stalled(dict):
    """The notebook's objects the grader stalled, by name: name -> (object, why)."""

    def mark(self, names: dict, user_ns: dict) -> None:
        self.update((n, (user_ns[n], why)) for n, why in names.items() if n in user_ns)

    def among(self, names, user_ns: dict) -> dict:
        """{name: why} for those of `names` that still hold a stalled object."""
        held = {n: self[n] for n in names if n in self}
        return {n: reason for n, (obj, reason) in held.items() if user_ns.get(n) is obj}


def _serve_case(shell, link: channel.Channel, request: protocol.RunCase):
    """Run one check case through `run_case` on the notebook's objects."""
    user_ns, case = shell.user_ns, request.case
    namespace = {t: user_ns[n] for t, n in request.names.items() if n in user_ns}
    owners = {n: user_ns[n] for n in request.owners if n in user_ns} or namespace
    standins.case_owners = guarded.owner_codes(owners)
    link.noted = set()
    try:
        with captured(shell), link.student_code():
            result = run_case(namespace, case, standins.resolve, owners)
    except KeyboardInterrupt as stopped:
        running = running_functions(stopped, user_ns, [request.case_function()])
        return protocol.Interrupted(request.id, running)
    finally:
        link.noted = None
        standins.case_owners = {}
    return protocol.CaseDone(request.id, result, list(shell.collector.items))


def _serve_cell(shell, link: channel.Channel, request: protocol.RunCell):
    standins.test_cell = request.test_cell
    try:
        with link.student_code():
            outputs, failed = run_cell(shell, request.source)
    finally:
        standins.test_cell = None
    error = shell.last_execution_result.error_in_exec
    if isinstance(error, KeyboardInterrupt):
        return protocol.Interrupted(request.id, running_functions(error, shell.user_ns))
    return protocol.CellDone(request.id, outputs, failed)


def handle(shell, link: channel.Channel, stalled: Stalled, request):
    """The reply to one request (see `protocol`)."""
    try:
        if isinstance(request, protocol.RunCell):
            return _serve_cell(shell, link, request)
        if isinstance(request, protocol.RunCase):
            return _serve_case(shell, link, request)
        if isinstance(request, protocol.Stall):
            stalled.mark(request.names, shell.user_ns)
            return protocol.StallDone(request.id)
        defined = tuple(n for n in request.names if n in shell.user_ns)
        return protocol.NamesDone(request.id, defined, stalled.among(request.names, shell.user_ns))
    except KeyboardInterrupt:  # it landed outside the student's own code
        return protocol.Interrupted(request.id)


def serve(link: channel.Channel, setup: protocol.Setup) -> None:
    """Answer requests until told to stop (or the grader is gone)."""
    shell, stalled = make_shell(), Stalled()
    real_torch = setup.torch is True
    standins.install(real_torch, setup.student, setup.variant)
    if real_torch:
        from .module_probes import import_torchs_lazy_parts

        import_torchs_lazy_parts()
    sys.argv = ["grading-sandbox"]
    link.send(protocol.Ready())
    while True:
        request = link.receive()
        if isinstance(request, protocol.Bye):
            os._exit(0)
        if not isinstance(request, protocol.REQUESTS) or type(request.id) is not int:
            os._exit(wire.LOST_SYNC)  # no request: the two ends are out of step
        link.request = request.id
        reply = handle(shell, link, stalled, request)
        try:
            link.send(reply)
        except wire.WireError as exc:  # a reply that will not encode fails its cell
            link.send(protocol.Failed(request.id, f"reply: {exc}"))


def main() -> None:
    link = channel.connect(socket.socket(fileno=int(sys.argv[1])))
    link.install()
    try:
        setup = set_up(link)
    except Exception as exc:  # noqa: BLE001 (no student code runs in a kernel not set up)
        try:
            link.send(protocol.SetupFailed(f"{type(exc).__name__}: {exc}"[:500]))
        finally:
            os._exit(wire.SETUP_FAILED)
    try:
        serve(link, setup)
    finally:
        os._exit(wire.HARNESS_FAILED)


if __name__ == "__main__":
    main()
