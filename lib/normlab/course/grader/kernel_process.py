"""The grader's side of the sandbox: one kernel process, and its socket.

`start_kernel` starts `python -I -m normlab_sandbox.kernel` as the isolation says (in bubblewrap
under strict, `bwrap`), sends it the setup and waits until it is ready. `Kernel.request` sends
one request at a time, answers and paces the kernel's questions, and enforces the timeout: a
SIGINT, then after `GRACE_S` the whole sandbox killed. Any way the kernel stops answering (an
ignored timeout, `os._exit`, a segfault, a limit, a frame that fails its checksum, a message out
of turn) kills it and raises `KernelDied` with a reason a student can read; `kernel_session`
replaces it. The protocol: `normlab_sandbox.protocol`; what it defends, and why every kernel
is a fresh interpreter (Throughput): instructors/threat_model.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from normlab_sandbox import protocol, wire
from normlab_sandbox.protocol import WIRE_TYPES
from normlab_sandbox.wire import HARNESS_FAILED, LOST_SYNC, SETUP_FAILED

from .isolation import Isolation

GRACE_S = 2.0  # after the interrupt, before the kill: a loop ends within timeout + 5 s
ANSWER_ALLOWANCE_S = 0.1  # CPU seconds of answering a request gets before it is paced ...
ANSWER_SHARE = 0.03  # ... to at most this share of the request's wall time
STOPPED = ("Unavailable", "the cell was interrupted")  # the answer after the interrupt
START_TIMEOUT_S = 120.0
MAX_FILES_BYTES = 128 * 1024 * 1024  # a submission folder larger than this is refused
LOG = "kernel.log"  # the kernel's stdout and stderr, in its private folder on the grader's side
SIGNAL_HINTS = {
    "SIGSEGV": "it crashed (segmentation fault)",
    "SIGBUS": "it crashed (bus error)",
    "SIGABRT": "it aborted (often a failed allocation under the memory limit)",
    "SIGKILL": "it was killed (the grader stopped it, or it ran out of memory)",
    "SIGXFSZ": "it wrote a file larger than the file size limit",
    "SIGXCPU": "it used up its CPU time limit ({cpu_seconds} s)",
}
EXIT_REASONS = {  # the kernel's own exit statuses (normlab_sandbox.wire)
    SETUP_FAILED: "the grader could not set up the sandbox for this kernel (see --isolation)",
    LOST_SYNC: "the kernel's channel to the grader broke: the notebook's code cut one of the "
    "kernel's own messages (for example by replacing its SIGINT handler)",
    HARNESS_FAILED: "the kernel's grading harness failed: the notebook's code broke the "
    "kernel's own machinery (for example by patching builtins)",
}


class KernelDied(Exception):
    """The kernel stopped answering; `reason` says why, for the student and the report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class KernelStartError(RuntimeError):
    """The kernel did not start: the grader's environment, not the submission, is at fault."""


class Interrupted(Exception):
    """The request ran past its timeout and the kernel stopped it (KeyboardInterrupt);
    `running` names the notebook's functions that were running."""

    def __init__(self, running=()) -> None:
        super().__init__("interrupted")
        self.running = list(running)  # strings: `protocol.Interrupted` checked them


def describe_exit(code: int, via_bwrap: bool, cpu_seconds=None) -> str:
    """A kernel's exit status in words: Popen's returncode, which bwrap gives as 128 + the
    signal when the kernel was killed by one."""
    signum = -code if code < 0 else code - 128 if via_bwrap and code > 128 else None
    if signum is not None:
        name = signal.Signals(signum).name if signum in signal.valid_signals() else str(signum)
        hint = SIGNAL_HINTS.get(name, "killed by a signal").format(cpu_seconds=cpu_seconds)
        return f"the kernel died with {name}: {hint}"
    return EXIT_REASONS.get(code, f"the kernel exited with code {code} (os._exit or a fatal error)")


def read_files(folder: str) -> list[tuple[str, bytes]]:
    """Every regular file under `folder` as (relative path, content), but notebooks (the
    autograded copy holds the restored hidden tests) and symlinks."""
    files, total = [], 0
    for root, _, names in os.walk(folder):  # not into a symlinked folder
        for name in names:
            path = os.path.join(root, name)
            if name.endswith(".ipynb") or os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                data = handle.read(MAX_FILES_BYTES + 1 - total)
            total += len(data)
            if total > MAX_FILES_BYTES:
                raise KernelDied(f"the submission folder is larger than {MAX_FILES_BYTES} bytes")
            files.append((os.path.relpath(path, folder), data))
    return files


def usage_of(pid: int) -> tuple[float | None, int | None]:
    """(CPU seconds process `pid` and its waited-for children used so far, the largest
    resident memory it has held so far in bytes: VmHWM, the kernel's own, bwrap's reaper and
    its children apart), each None where Linux's /proc does not tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
        cpu = ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError):
        cpu = None
    try:
        peak = re.search(r"^VmHWM:\s*(\d+)", Path(f"/proc/{pid}/status").read_text(), re.M)
    except OSError:
        peak = None
    return cpu, int(peak[1]) * 1024 if peak else None


def _child(pid: int) -> int | None:
    """The first child of process `pid` (Linux /proc), or None."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if children else None


class Kernel:
    """One sandboxed kernel process; `request` runs one step of the notebook."""

    def __init__(self, proc: subprocess.Popen, sock, home: str, via_bwrap: bool, cpu) -> None:
        self.proc, self.sock, self.home = proc, sock, home
        self.via_bwrap, self.cpu_seconds = via_bwrap, cpu
        self.pid = proc.pid  # the process to interrupt: the kernel itself, once it is ready
        self.reader = wire.FrameReader(sock)
        self.dead: str | None = None
        self.cpu_used: float | None = None  # the kernel's CPU seconds, once closed
        self.peak_memory: int | None = None  # ... and its peak resident memory, bytes
        self._next_id = 0

    def _send(self, message) -> None:
        self.sock.settimeout(30.0)
        self.sock.sendall(wire.frame(wire.dumps(message, WIRE_TYPES)))

    def _ready(self, setup: dict, files) -> None:
        """Send the setup and the files; wait for the kernel's `Ready`."""
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            self._send(protocol.Setup(**setup, files=len(files)))
            for path, data in files:
                self._send(protocol.File(path, data))
            reply = wire.loads(self.reader.read(deadline), WIRE_TYPES)
        except (OSError, EOFError, wire.WireError):  # TimeoutError is an OSError
            reply = None
        if not isinstance(reply, protocol.Ready):
            why = reply.reason if isinstance(reply, protocol.SetupFailed) else None
            self.kill()
            status = describe_exit(self.proc.wait(), self.via_bwrap)
            log = (Path(self.home) / LOG).read_text(errors="replace")[-3000:]
            self.close()
            raise KernelStartError(f"the sandbox kernel did not start: {why or status}\n{log}")
        if self.via_bwrap:  # bwrap -> its reaper (pid 1 inside) -> the kernel
            reaper = _child(self.proc.pid)
            self.pid = (_child(reaper) if reaper else None) or self.proc.pid

    def request(self, message, timeout: float, answer):
        """Send `message` (a `protocol.REQUESTS` instance, stamped here with this kernel's
        next id); serve the kernel's questions with `answer(question) -> (value, error)` (a
        note gets no answer) until its reply, which is returned. Raises Interrupted (timeout,
        kernel alive) or KernelDied (the kernel is killed: nothing more is read from this
        channel)."""
        if self.dead:
            raise KernelDied(self.dead)
        self._next_id += 1
        ident = self._next_id
        expected = (protocol.REPLY_TO[type(message)], protocol.Failed)
        self._deliver(dataclasses.replace(message, id=ident))
        interrupted = False
        started, cpu = time.monotonic(), time.process_time()
        deadline = started + timeout
        while True:
            if not interrupted:  # after the interrupt, a question is refused at once
                self._pace(started, cpu, deadline)
            try:
                frame = self._receive(ident, deadline)
            except TimeoutError:
                if interrupted:
                    self._fail(f"it ignored the interrupt at the {timeout:g} s timeout")
                self._signal(signal.SIGINT)
                interrupted, deadline = True, time.monotonic() + GRACE_S
                continue
            if isinstance(frame, protocol.Note):
                answer(frame)
            elif isinstance(frame, protocol.QUESTIONS):
                value, error = (None, STOPPED) if interrupted else answer(frame)
                self._deliver(protocol.Answer(ident, frame.seq, value, error))
            elif interrupted or isinstance(frame, protocol.Interrupted):
                raise Interrupted(getattr(frame, "running", ()))
            elif not isinstance(frame, expected):
                self._fail("it sent a message out of turn")
            else:
                return frame

    def _deliver(self, message: dict) -> None:
        try:
            self._send(message)
        except OSError:
            self._fail(None)

    def _receive(self, ident: int, deadline: float):
        """The kernel's next message for request `ident` (TimeoutError once `deadline` has
        passed, nothing lost); anything but a note, a question or a reply kills it."""
        try:
            frame = wire.loads(self.reader.read(deadline), WIRE_TYPES)
        except TimeoutError:
            raise
        except (EOFError, OSError):
            self._fail(None)
        except wire.LostSync as exc:
            self._fail(f"it lost its place on the channel ({exc})")
        except wire.WireError as exc:
            self._fail(f"it sent a message the grader refuses ({exc})")
        kinds = (protocol.Note, *protocol.QUESTIONS, *protocol.REPLIES)
        if not isinstance(frame, kinds) or frame.id != ident:
            self._fail("it sent a message out of turn")
        return frame

    @staticmethod
    def _pace(started: float, cpu: float, deadline: float) -> None:
        """Once answering this request has cost ANSWER_ALLOWANCE_S of the grader's CPU, wait
        until that CPU is at most ANSWER_SHARE of the request's wall time (a loop of
        questions then costs the grader a few percent of a CPU, not one)."""
        spent = time.process_time() - cpu - ANSWER_ALLOWANCE_S
        if spent > 0:
            wait = started + spent / ANSWER_SHARE - time.monotonic()
            time.sleep(max(0.0, min(wait, deadline - time.monotonic())))

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signum)

    def _fail(self, why: str | None):
        """Kill the kernel, learn how it ended, and raise KernelDied."""
        if why is None:  # it stopped by itself: give it a moment to be reaped
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5.0)
        self.cpu_used, self.peak_memory = usage_of(self.pid)
        self.kill()
        status = describe_exit(self.proc.wait(), self.via_bwrap, self.cpu_seconds)
        self.dead = f"the kernel was stopped: {why}" if why else status
        raise KernelDied(self.dead)

    def kill(self) -> None:
        """Kill the kernel and everything it started (its sandbox, or its process group)."""
        self._signal(signal.SIGKILL)
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(self.proc.pid, signal.SIGKILL)

    def close(self) -> None:
        """Ask the kernel to exit (kill it if it does not); remove its private folder."""
        if not self.dead:
            self.cpu_used, self.peak_memory = usage_of(self.pid)
            with contextlib.suppress(OSError):
                self._send(protocol.Bye())
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5.0)
        self.kill()
        self.proc.wait()
        self.sock.close()
        shutil.rmtree(self.home, ignore_errors=True)


def start_kernel(
    isolation: Isolation,
    slot: int,
    files_dir: str | None,
    student: str = "",
    variant: dict | None = None,
) -> Kernel:
    """A ready kernel for grading slot `slot`, holding the files of `files_dir`; `variant`:
    `student`'s own numbers, for an assignment with a pool (the setup sends them)."""
    files = read_files(files_dir) if files_dir else []
    home = tempfile.mkdtemp(prefix="normlab-kernel-")
    launch = isolation.launch(slot, home)
    ours, theirs = socket.socketpair()
    try:
        with open(Path(home) / LOG, "wb") as log:
            proc = subprocess.Popen(
                [*launch.argv, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env=launch.env,
                cwd=home,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
    except OSError:
        ours.close()
        shutil.rmtree(home, ignore_errors=True)
        raise
    finally:
        theirs.close()
    kernel = Kernel(proc, ours, home, launch.via_bwrap, isolation.limits.cpu_seconds)
    kernel._ready({**launch.setup, "student": student, "variant": variant}, files)
    return kernel
