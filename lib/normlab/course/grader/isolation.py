"""How tightly a grading kernel is locked in: the level, the paths it must not see, its limits.

`strict` runs each kernel in a bubblewrap sandbox (`bwrap`) that sees neither the course
directory nor home folders nor the exchange (`course_secrets`, also hidden where they lie inside
what is exposed). A normal user gets it where unprivileged user namespaces are allowed (Debian
11+, Fedora, RHEL 9, Arch); root everywhere, each slot's kernels then running as the slot's own
unprivileged uid (`uid_base + slot`), so the process limit counts one slot's processes only.
`basic` is a private working folder, a scrubbed environment and resource limits: it does not
stop a submission from reading what the grader's user can, or signalling its processes. `auto`
(the default) is strict, refusing to grade where it cannot be; basic is only ever asked for.
`real_torch` (`normlab.grading.REAL_TORCH`, ps8) gives the kernels the real torch, read from the
same read-only Python installation; nothing else changes.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import site
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import normlab_sandbox

from . import bwrap

GIB = 1 << 30
MIB = 1 << 20
# in Debian's reserved 60000-64999, where a few packages take one (slurm: 64030; check_uids)
DEFAULT_UID_BASE = 64000
KERNEL_MODULE = "normlab_sandbox.kernel"
STRICT_HOME = "/tmp"  # the kernel's private tmpfs, under strict isolation
# one BLAS / OpenMP thread per kernel: the grader runs one kernel per CPU
THREADS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Limits:
    """Per-kernel resource limits (see normlab_sandbox.kernel.set_limits)."""

    memory_bytes: int = 2 * GIB  # address space: numpy + IPython use about 0.5 GiB of it
    cpu_seconds: int = 600
    file_bytes: int = 64 * MIB
    open_files: int = 256
    processes: int = 64  # per sandbox (strict only: otherwise the grader's own count too)
    tmp_bytes: int = 256 * MIB  # each private tmpfs (strict only)


def kernel_env(home: str) -> dict[str, str]:
    """The kernel's whole environment; `home` is its private folder (work/ is its cwd)."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "USER": "student",
        "HOME": f"{home}/work",
        "TMPDIR": home,
        "IPYTHONDIR": f"{home}/.ipython",
        "MPLCONFIGDIR": f"{home}/.matplotlib",
        "MPLBACKEND": "Agg",
        "NBGRADER_EXECUTION": "autograde",
        **THREADS_ENV,
    }


@dataclass(frozen=True)
class Launch:
    """How to start one kernel: its command (up to the socket's fd), environment and setup."""

    argv: list[str]
    env: dict[str, str]
    setup: dict  # the kernel's setup message but the files (see normlab_sandbox.kernel)
    via_bwrap: bool


@dataclass(frozen=True)
class Isolation:
    """Everything a worker needs to sandbox kernels for one course."""

    mode: str  # "strict" or "basic"
    hide: tuple[str, ...] = ()
    expose: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    uid_base: int = DEFAULT_UID_BASE
    real_torch: bool = False

    def launch(self, slot: int, basic_home: str) -> Launch:
        """How grading slot `slot` starts a kernel; `basic_home` is the empty private folder
        the grader made for it (used under basic isolation; strict has its own /tmp)."""
        limits = asdict(self.limits)
        del limits["tmp_bytes"]  # bwrap's, not the kernel's
        argv = [sys.executable, "-I", "-m", KERNEL_MODULE]
        strict, root = self.mode != "basic", os.geteuid() == 0
        if not strict:
            del limits["processes"]  # it would count the grader's own processes too
        home = STRICT_HOME if strict else basic_home
        uid = self.uid_base + slot if strict and root else None
        setup = {"uid": uid, "workdir": f"{home}/work", "limits": limits, "torch": self.real_torch}
        if strict:
            argv = [*bwrap.command(self.expose, self.hide, self.limits.tmp_bytes, root), *argv]
        return Launch(argv, kernel_env(home), setup, via_bwrap=strict)


def python_paths() -> list[str]:
    """What the kernel needs to read to run: the Python installation, its site-packages, and
    normlab_sandbox (outside site-packages in an editable install)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths.update(p for p in site.getsitepackages() if os.path.isdir(p))
    paths.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    paths.update(p for p in sys.path if p.startswith(sys.base_prefix) and os.path.isdir(p))
    paths.add(str(Path(normlab_sandbox.__file__).parent))
    return sorted({os.path.abspath(p) for p in paths})


def sqlite_path(db_url: str) -> str | None:
    """The file of an sqlite:/// URL, else None."""
    parts = urlsplit(db_url)
    if not parts.scheme.startswith("sqlite"):
        return None
    path = db_url.split(":///", 1)[-1].split("?", 1)[0]
    return os.path.abspath(path) if path and path != ":memory:" else None


def course_secrets(coursedir, config) -> list[str]:
    """The paths a kernel must not see for this course (the course root and every nbgrader
    folder that lives outside it, the sqlite gradebook, and the exchange folder that `config`
    gives nbgrader's default exchange, if it exists)."""
    from nbgrader.exchange.default.exchange import Exchange

    names = ("source", "release", "submitted", "autograded", "feedback", "solution")
    folders = [getattr(coursedir, f"{name}_directory", None) for name in names]
    paths = [coursedir.root, *(os.path.join(coursedir.root, f) for f in folders if f)]
    db = sqlite_path(coursedir.db_url)
    if db:
        paths.append(os.path.dirname(db))
    exchange = Exchange(config=config).root
    if exchange and os.path.isdir(exchange):
        paths.append(exchange)
    return sorted({os.path.realpath(p) for p in paths})


def check_uids(uid_base: int, slots: int) -> None:
    """Refuse a uid range that belongs to real accounts."""
    for uid in range(uid_base, uid_base + slots):
        try:
            owner = pwd.getpwuid(uid).pw_name
        except KeyError:
            continue  # no account has it
        raise SystemExit(
            f"uid {uid} belongs to the account {owner!r}; grading kernels need uids no account "
            f"uses: pass --uid-base with a free range of {slots}"
        )


def choose(
    mode: str,
    coursedir,
    config,
    slots: int,
    limits: Limits | None = None,
    uid_base: int = DEFAULT_UID_BASE,
    real_torch: bool = False,
) -> Isolation:
    """The isolation for this run of the course `coursedir` (nbgrader's `config`): `mode` "auto"
    (= "strict") or "basic"; `real_torch`: the kernels get the real torch (the module docstring)."""
    if mode not in ("auto", "strict", "basic"):
        raise SystemExit(f"unknown isolation {mode!r}: use auto, strict or basic")
    if real_torch and importlib.util.find_spec("torch") is None:
        # without it every cell would score 0: the grader's oracle and the kernels need torch
        raise SystemExit(
            "this assignment grades a torch module, and torch is not installed where the "
            f"grader runs ({sys.executable}): install it (pip install 'normlab[torch]'; the "
            "CPU wheel is enough) and grade again"
        )
    limits = limits or Limits()
    if mode == "basic":
        return Isolation("basic", limits=limits, real_torch=real_torch)
    expose = tuple(python_paths())
    missing = bwrap.unavailable(expose, limits.tmp_bytes)
    if missing:
        raise SystemExit(
            f"refusing to run students' code without strict isolation: {missing}. Install "
            "bubblewrap and allow unprivileged user namespaces (or grade as root), or pass "
            "--isolation basic to grade without it knowingly (see instructors/threat_model.md)"
        )
    if os.geteuid() == 0:
        check_uids(uid_base, slots)
    hide = course_secrets(coursedir, config)
    return Isolation("strict", tuple(hide), expose, limits, uid_base, real_torch)
