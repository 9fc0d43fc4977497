"""The grader's side of the sandbox: a zygote per worker, and one jailed kernel per submission.

`Zygote` starts `kernel/zygote.py` (a fresh interpreter that never loads the reference) and
forks kernels from it; `Kernel` sends one request at a time and enforces the cell timeout: at
the timeout the kernel gets SIGINT (KeyboardInterrupt in the student's code), and if no reply
comes within `GRACE_S` its whole process group is killed. Any way the kernel stops answering
(a timeout it ignores, `os._exit`, a segfault, the memory or CPU limit, a broken reply) raises
`KernelDied` with a reason a student can read. See instructors/threat_model.md.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .kernel import wire
from .kernel.wire import HARNESS_FAILED, JAIL_FAILED

ZYGOTE_SCRIPT = Path(__file__).resolve().parent / "kernel" / "zygote.py"
GRACE_S = 2.0  # after the interrupt, before the kill: a loop ends within timeout + 5 s
START_TIMEOUT_S = 120.0


class KernelDied(Exception):
    """The kernel stopped answering; `reason` says why, for the student and the report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Interrupted(Exception):
    """The request ran past its timeout and the kernel stopped it (KeyboardInterrupt)."""


def describe_exit(status: int | None, cpu_seconds=None) -> str:
    """A wait status in words."""
    if status is None:
        return "the kernel stopped answering"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hints = {
            "SIGSEGV": "it crashed (segmentation fault)",
            "SIGBUS": "it crashed (bus error)",
            "SIGABRT": "it aborted (often a failed allocation under the memory limit)",
            "SIGKILL": "it was killed (the grader stopped it, or it ran out of memory)",
            "SIGXCPU": f"it used up its CPU time limit ({cpu_seconds} s)",
            "SIGXFSZ": "it wrote a file larger than the file size limit",
        }
        return f"the kernel died with {name}: {hints.get(name, 'killed by a signal')}"
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == JAIL_FAILED:
        return "the grader could not set up the sandbox for this kernel (see --isolation)"
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == HARNESS_FAILED:
        return (
            "the kernel's grading harness failed: the notebook's code broke the kernel's own "
            "machinery (for example by patching builtins)"
        )
    if os.WIFEXITED(status):
        return f"the kernel exited with code {os.WEXITSTATUS(status)} (os._exit or a fatal error)"
    return f"the kernel stopped (wait status {status})"


class _DeadlineSocket:
    """A socket whose every recv waits at most until a shared deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.deadline = None

    def recv(self, n: int) -> bytes:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self.sock.settimeout(left)
        else:
            self.sock.settimeout(None)
        return self.sock.recv(n)

    def sendall(self, data: bytes) -> None:
        self.sock.settimeout(30.0)
        self.sock.sendall(data)


class Kernel:
    """One jailed kernel (one submission); `request` runs one step of the notebook."""

    def __init__(self, zygote: Zygote, sock: socket.socket, pid: int, cpu_seconds) -> None:
        self.zygote, self.pid, self.cpu_seconds = zygote, pid, cpu_seconds
        self.link = _DeadlineSocket(sock)
        self.sock = sock
        self.dead: str | None = None
        self._next_id = 0

    def request(self, message: dict, timeout: float, answer) -> dict:
        """Send `message`; serve the kernel's questions with `answer(question) -> reply`
        until its reply. Raises Interrupted (timeout, kernel alive) or KernelDied."""
        if self.dead:
            raise KernelDied(self.dead)
        self._next_id += 1
        ident = self._next_id
        registry = self.zygote.registry
        try:
            wire.send_message(self.link, {**message, "id": ident}, registry)
        except OSError:
            self._fail(None)
        interrupted = False
        self.link.deadline = time.monotonic() + timeout
        while True:
            try:
                frame = wire.recv_message(self.link, registry)
            except TimeoutError:
                if interrupted:
                    self._fail(f"it ignored the interrupt at the {timeout:g} s timeout")
                os.kill(self.pid, signal.SIGINT)
                interrupted = True
                self.link.deadline = time.monotonic() + GRACE_S
                continue
            except (EOFError, OSError):
                self._fail(None)
            except wire.WireError as exc:
                self._fail(f"it sent a reply the grader refuses ({exc})")
            if not isinstance(frame, dict):
                self._fail("it sent a reply that is not a message")
            if frame.get("op") == "ask":
                wire.send_message(self.link, {"op": "answer", **answer(frame)}, registry)
                continue
            if frame.get("op") != "done" or frame.get("id") != ident:
                self._fail("it sent a reply out of turn")
            self.link.deadline = None
            if interrupted or frame.get("interrupted"):
                raise Interrupted
            return frame

    def _fail(self, why: str | None):
        """Kill the kernel, learn how it ended, and raise KernelDied."""
        self.kill()
        status = self.zygote.wait_exit()
        reason = describe_exit(status, self.cpu_seconds)
        if why:
            reason = f"the kernel was stopped: {why}"
        self.dead = reason
        raise KernelDied(reason)

    def kill(self) -> None:
        for kill in (os.killpg, os.kill):
            try:
                kill(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        """Ask the kernel to exit (kill it if it does not) and collect its exit status."""
        if not self.dead:
            try:
                wire.send_message(self.link, {"op": "bye"})
            except OSError:
                pass
            status = self.zygote.wait_exit(timeout=5.0)
            if status is None:
                self.kill()
                self.zygote.wait_exit()
        self.sock.close()


class Zygote:
    """A pre-warmed kernel factory (see `kernel/zygote.py`); one per grading worker."""

    def __init__(self, python: str = sys.executable) -> None:
        self.home = tempfile.mkdtemp(prefix="normlab-zygote-")
        os.chmod(self.home, 0o755)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control = ours
        self.log_path = Path(self.home) / "zygote.log"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": self.home,
            "IPYTHONDIR": str(Path(self.home) / "ipython"),
            "MPLCONFIGDIR": str(Path(self.home) / "matplotlib"),
            "MPLBACKEND": "Agg",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [python, "-I", str(ZYGOTE_SCRIPT), str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.home,
            )
        theirs.close()
        from normlab.grading.cases import Case, Ref, Result

        self.registry = {"Case": Case, "Ref": Ref, "Result": Result}
        ready = self._receive(START_TIMEOUT_S)
        if not ready or "ready" not in ready:
            log = self.log_path.read_text(errors="replace")[-3000:]
            self.close()
            raise RuntimeError(f"the sandbox zygote did not start:\n{log}")

    def _receive(self, timeout: float | None):
        self.control.settimeout(timeout)
        try:
            data = self.control.recv(1 << 16)
        except (TimeoutError, OSError):
            return None
        return json.loads(data) if data else None

    def spawn(self, spec: dict) -> Kernel:
        """Fork a kernel jailed by `spec` (see `kernel/jail.enter`)."""
        ours, theirs = socket.socketpair()
        socket.send_fds(
            self.control, [json.dumps({"op": "spawn", "spec": spec}).encode()], [theirs.fileno()]
        )
        theirs.close()
        reply = self._receive(30.0)
        if not reply or "pid" not in reply:
            ours.close()
            raise RuntimeError(f"the sandbox zygote could not fork a kernel: {reply}")
        cpu = spec.get("limits", {}).get("cpu_seconds")
        return Kernel(self, ours, reply["pid"], cpu)

    def wait_exit(self, timeout: float | None = 30.0) -> int | None:
        """The exit status of the current kernel, once the zygote has reaped it."""
        reply = self._receive(timeout)
        return reply.get("exit") if reply else None

    def close(self) -> None:
        self.control.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)
