"""How tightly a grading kernel is locked in: the level, the paths it must not see, its limits.

`strict` needs root on Linux (mount namespaces, chroot and a uid change): each grading slot
gets its own unprivileged uid (`uid_base + slot`), and the kernel's root holds only the
operating system's /usr, the Python installation (`python_paths`) and a private /tmp (see
kernel/jail.py), so it sees neither the course directory (source, release, submitted,
autograded, feedback, gradebook, .git), nor any other folder, nor the network. The course's
own folders and the exchange are named in `hide` too, in case one lies inside what is
exposed. `basic` is what any user can have: a private working
folder, a scrubbed environment and resource limits; it does not stop a submission from
reading files the grader's user can read or from signalling the grader's processes.
`auto` picks strict when it works here (root, namespaces allowed) and basic otherwise, and the
grader says so.
"""

from __future__ import annotations

import os
import pwd
import site
import sys
from dataclasses import dataclass, field
from urllib.parse import urlsplit

GIB = 1 << 30
MIB = 1 << 20
DEFAULT_UID_BASE = 64000  # Debian's range 60000-64999 is reserved, so no account owns these


@dataclass(frozen=True)
class Limits:
    """Per-kernel resource limits (see kernel/jail.set_limits)."""

    memory_bytes: int = 2 * GIB  # address space: numpy + IPython use about 0.5 GiB of it
    cpu_seconds: int = 600
    file_bytes: int = 64 * MIB
    open_files: int = 256
    processes: int = 64  # per uid, threads included (strict only)
    tmp_bytes: int = 256 * MIB  # each private tmpfs (strict only)


@dataclass(frozen=True)
class Isolation:
    """Everything a worker needs to jail kernels for one course."""

    mode: str  # "strict" or "basic"
    hide: tuple[str, ...] = ()
    expose: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    uid_base: int = DEFAULT_UID_BASE

    def spec(self, slot: int, files_dir: str, workdir: str | None = None) -> dict:
        """The jail spec for one kernel in grading slot `slot` (see kernel/jail.enter)."""
        limits = self.limits
        spec = {
            "mode": self.mode,
            "files_dir": files_dir,
            "limits": {
                "memory_bytes": limits.memory_bytes,
                "cpu_seconds": limits.cpu_seconds,
                "file_bytes": limits.file_bytes,
                "open_files": limits.open_files,
                "processes": limits.processes,
            },
            "env": {
                "PATH": "/usr/local/bin:/usr/bin:/bin",
                "LANG": "C.UTF-8",
                "USER": "student",
                "NBGRADER_EXECUTION": "autograde",
                "MPLBACKEND": "Agg",
                "OPENBLAS_NUM_THREADS": "1",
                "OMP_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1",
            },
        }
        if self.mode == "strict":
            spec.update(
                uid=self.uid_base + slot,
                hide=list(self.hide),
                expose=list(self.expose),
                tmp_bytes=limits.tmp_bytes,
            )
        else:
            spec["workdir"] = workdir
        return spec


def python_paths() -> list[str]:
    """What the kernel needs to read to run Python: the installation and its site-packages."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths.update(p for p in site.getsitepackages() if os.path.isdir(p))
    paths.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    paths.update(p for p in sys.path if p.startswith(sys.base_prefix) and os.path.isdir(p))
    return sorted({os.path.abspath(p) for p in paths})


def sqlite_path(db_url: str) -> str | None:
    """The file of an sqlite:/// URL, else None."""
    parts = urlsplit(db_url)
    if not parts.scheme.startswith("sqlite"):
        return None
    path = db_url.split(":///", 1)[-1].split("?", 1)[0]
    return os.path.abspath(path) if path and path != ":memory:" else None


def course_secrets(coursedir, exchange_root: str | None) -> list[str]:
    """The paths a kernel must not see for this course (the course root and every nbgrader
    folder that lives outside it, the sqlite gradebook and the exchange)."""
    paths = [coursedir.root]
    for name in ("source", "release", "submitted", "autograded", "feedback", "solution"):
        folder = getattr(coursedir, f"{name}_directory", None)
        if folder:
            paths.append(os.path.join(coursedir.root, folder))
    db = sqlite_path(coursedir.db_url)
    if db:
        paths.append(os.path.dirname(db))
    if exchange_root:
        paths.append(exchange_root)
    return sorted({os.path.realpath(p) for p in paths})


def check_uids(uid_base: int, slots: int) -> None:
    """Refuse a uid range that belongs to real accounts."""
    for uid in range(uid_base, uid_base + slots):
        try:
            owner = pwd.getpwuid(uid).pw_name
        except KeyError:
            continue
        raise SystemExit(
            f"uid {uid} belongs to the account {owner!r}; grading kernels need uids no account "
            f"uses: pass --uid-base with a free range of {slots}"
        )


def strict_unavailable() -> str | None:
    """Why strict isolation cannot work here (None when it can): a forked probe tries what
    every kernel will do, a mount namespace with a tmpfs in it."""
    import ctypes

    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return "it needs root on Linux"
    pid = os.fork()
    if pid == 0:  # the probe
        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.unshare(0x00020000 | 0x40000000) == 0  # CLONE_NEWNS | CLONE_NEWNET
        ok = ok and libc.mount(None, b"/", None, 0x4000 | 0x40000, None) == 0  # rec, private
        ok = ok and libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, b"size=1m") == 0
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return None
    return "this system does not let root create mount and network namespaces"


def choose(
    mode: str,
    coursedir,
    exchange_root: str | None,
    slots: int,
    limits: Limits,
    uid_base: int = DEFAULT_UID_BASE,
    extra_hidden=(),
) -> Isolation:
    """The isolation for this run; `mode` is "auto", "strict" or "basic"."""
    if mode in ("auto", "strict"):
        missing = strict_unavailable()
        if missing and mode == "strict":
            raise SystemExit(
                f"strict isolation is not possible: {missing}. Run the grader as root on "
                "Linux, or pass --isolation basic (see the threat model)"
            )
        if mode == "auto":
            mode = "basic" if missing else "strict"
    if mode not in ("strict", "basic"):
        raise SystemExit(f"unknown isolation {mode!r}: use auto, strict or basic")
    if mode == "basic":
        return Isolation("basic", limits=limits)
    check_uids(uid_base, slots)
    hide = course_secrets(coursedir, exchange_root) + list(extra_hidden)
    return Isolation(
        "strict",
        hide=tuple(sorted(set(hide))),
        expose=tuple(python_paths()),
        limits=limits,
        uid_base=uid_base,
    )
