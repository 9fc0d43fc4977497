"""The zygote: a pre-warmed factory of sandbox kernels, one fork per submission.

Run as a script by the grader (`python -I zygote.py CONTROL_FD`), never imported by it, so
that it starts clean: it loads NumPy, IPython and the course's case runner
(`normlab.grading.runner`), but never normlab's reference nor torch. For that it registers
bare package objects for `normlab`, `normlab.course`, `normlab.course.kernel` and
`normlab.grading` (so their `__init__` files, which import the reference, do not run), and
puts stand-ins in place of `normlab.grading.trusted` and `normlab.grading.reference`, the
two modules that would load it. A kernel forked from here therefore has nothing of the
reference in its memory to find.

Control protocol on the SOCK_SEQPACKET socket CONTROL_FD (JSON, one message per packet):
the grader sends {"op": "spawn", "spec": {...}} with the kernel's socket attached; the zygote
forks a kernel, answers {"pid": N}, waits for it, sweeps the kernel's uid of any process it
left behind (strict isolation), and answers {"exit": wait status}. EOF ends the zygote.
Cost per kernel: one fork (milliseconds) instead of a new interpreter and its imports.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys
import types
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
NORMLAB_DIR = Path(__file__).resolve().parents[2]


def _bare_package(name: str, folder: Path) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = [str(folder)]
    module.__package__ = name
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module


def load_kernel_code():
    """Import what every kernel needs; return (shell, run_case, wire registry)."""
    _bare_package("normlab", NORMLAB_DIR)
    _bare_package("normlab.course", NORMLAB_DIR / "course")
    _bare_package("normlab.course.kernel", NORMLAB_DIR / "course" / "kernel")
    grading = _bare_package("normlab.grading", NORMLAB_DIR / "grading")
    reference = types.ModuleType("normlab.grading.reference")
    reference.NORMLAB_DIR = NORMLAB_DIR
    sys.modules["normlab.grading.reference"] = grading.reference = reference

    import numpy  # noqa: F401 (warm: every kernel uses it)

    from normlab.course.kernel import child, standins  # noqa: F401
    from normlab.course.kernel.shell import make_shell

    sys.modules["normlab.grading.trusted"] = grading.trusted = standins
    from normlab.grading import cases, runner

    registry = {"Case": cases.Case, "Ref": cases.Ref, "Result": cases.Result}
    return make_shell(), runner.run_case, registry


def _sweep(uid: int) -> None:
    """Kill every process of `uid` (what a kernel may have left running), then reap."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _reap_orphans() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(control: socket.socket, shell, run_case, registry) -> None:
    from normlab.course.kernel import child, wire

    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, 1 << 20, 1)
        except OSError:
            return
        if not data:
            return
        request = json.loads(data)
        if request.get("op") != "spawn" or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            control.send(json.dumps({"error": "a spawn request needs one socket"}).encode())
            continue
        spec = request["spec"]
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                child.serve(fds[0], spec, shell, run_case, registry)
            finally:
                os._exit(wire.HARNESS_FAILED)
        os.close(fds[0])
        control.send(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        if spec.get("mode") == "strict":
            _sweep(int(spec["uid"]))
        _reap_orphans()
        control.send(json.dumps({"exit": status}).encode())


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the grader's Ctrl-C is the grader's
    libc = ctypes.CDLL(None)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # die with the grading worker
    shell, run_case, registry = load_kernel_code()
    control.send(json.dumps({"ready": os.getpid()}).encode())
    serve(control, shell, run_case, registry)


if __name__ == "__main__":
    main()
