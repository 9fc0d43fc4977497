"""The strict sandbox: a bubblewrap (`bwrap`) command line, and whether bwrap works here.

bubblewrap is the sandbox Flatpak uses (https://github.com/containers/bubblewrap; Debian's
`bubblewrap` package). `command` builds the arguments that put one grading kernel in the world
instructors/threat_model.md describes ("The kernel's world"): new IPC, PID, network, UTS and
cgroup namespaces (bwrap brings `lo` up in the network one: 127.0.0.1 reaches the sandbox
itself, nothing else), a normal user's also a user namespace in which the kernel may make no
more (root's kernel takes the grading slot's uid instead: `kernel.become`); a read-only root
from an allow-list (`OS_DIRS`, `ETC_ENTRIES`, a minimal /dev, a /proc of its own) and the
`expose`d folders, `hide` covering any course path inside those; private, size-limited tmpfs
on /tmp and /dev/shm; `--die-with-parent` and `--new-session`.

Folders that bwrap creates on the way to an exposed one get mode 755 (bwrap's own are 700,
which the grading slot's uid could not walk through).

Where a normal user's bwrap cannot make its user namespace, `forbidden` names the host setting
that forbids it and the fix, read from /proc/sys (`SETTINGS`; root's bwrap needs none).
AppArmor's restriction is Ubuntu's default since 24.04
(https://ubuntu.com/blog/ubuntu-23-10-restricted-unprivileged-user-namespaces); bwrap then fails
with "setting up uid map: Permission denied". instructors/threat_model.md shows each fix.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path, PurePath

OS_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts", "mime.types")
NAMESPACES = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts")
PROBE_TIMEOUT_S = 60
SYSCTL_D = "and in a file under /etc/sysctl.d/ to keep it"
APPARMOR_PROFILE = (
    "give bwrap an AppArmor profile with the rule `userns` (instructors/threat_model.md shows "
    "one: /etc/apparmor.d/bwrap, then apparmor_parser -r /etc/apparmor.d/bwrap)"
)
# (setting, the value that forbids, what that means, the fix)
SETTINGS = (
    (
        "user.max_user_namespaces",
        "0",
        "the kernel allows no user namespaces at all",
        f"raise it: sysctl -w user.max_user_namespaces=15000 ({SYSCTL_D})",
    ),
    (
        "kernel.unprivileged_userns_clone",
        "0",
        "Debian's switch keeps user namespaces to root",
        f"sysctl -w kernel.unprivileged_userns_clone=1 ({SYSCTL_D})",
    ),
    (
        "kernel.apparmor_restrict_unprivileged_userns",
        "1",
        "AppArmor allows them only to programs whose profile says so (Ubuntu 24.04's default)",
        f"{APPARMOR_PROFILE}, or lift the restriction for every program: sysctl -w "
        f"kernel.apparmor_restrict_unprivileged_userns=0 ({SYSCTL_D})",
    ),
)


def forbidden(proc_sys: str = "/proc/sys") -> str | None:
    """Each setting that forbids this user a user namespace, with its fix, in one line; None
    where none does (a setting /proc/sys does not show to this process forbids nothing)."""
    found = []
    for name, value, meaning, fix in SETTINGS:
        with contextlib.suppress(OSError):
            if (Path(proc_sys) / name.replace(".", "/")).read_text().strip() == value:
                found.append(f"{name} is {value} here ({meaning}): {fix}")
    return "; ".join(found) or None


def _mirror(path: str) -> list[str]:
    """The same link, or `path` bound read-only, at the same place; nothing if it is absent."""
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    return ["--ro-bind", path, path] if os.path.exists(path) else []


def command(expose, hide, tmp_bytes: int, privileged: bool) -> list[str]:
    """bwrap's arguments, up to and including `--`, for one kernel (see the module docstring).
    `privileged`: bwrap runs as root (no user namespace; the kernel drops to its uid)."""
    args = ["bwrap", *NAMESPACES, "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if not privileged:
        args += ["--unshare-user", "--disable-userns"]
    args += [arg for name in OS_DIRS for arg in _mirror("/" + name)]
    args += ["--perms", "0755", "--dir", "/etc"]
    args += [arg for name in ETC_ENTRIES for arg in _mirror("/etc/" + name)]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for private in ("/tmp", "/dev/shm"):
        args += ["--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", private]
    args += ["--perms", "0755", "--dir", "/var", "--symlink", "/tmp", "/var/tmp"]
    bound = ["/" + name for name in OS_DIRS if os.path.isdir("/" + name)]
    made = {"/etc", "/var", "/tmp", "/dev", "/proc"}
    for path in sorted({os.path.abspath(p) for p in expose if os.path.isdir(p)}):
        if any(PurePath(os.path.realpath(path)).is_relative_to(done) for done in bound):
            continue
        for folder in [str(p) for p in PurePath(path).parents][-2::-1]:  # '/a/b/c': /a, /a/b
            if folder not in made:
                args += ["--perms", "0755", "--dir", folder]
                made.add(folder)
        args += ["--ro-bind", path, path]
        bound.append(path)
    for path in sorted({os.path.abspath(p) for p in hide}):
        if not any(PurePath(path).is_relative_to(done) and path != done for done in bound):
            continue
        if os.path.isdir(path):
            args += ["--perms", "0000", "--tmpfs", path, "--remount-ro", path]
        elif os.path.lexists(path):
            args += ["--ro-bind", "/dev/null", path]
    return [*args, "--chdir", "/tmp", "--"]


def unavailable(expose, tmp_bytes: int) -> str | None:
    """Why strict isolation cannot work here, in one line, with the host setting that forbids
    it and its fix where one does (None when it can): bwrap runs this Python once, as a kernel."""
    if not sys.platform.startswith("linux"):
        return "bubblewrap sandboxes need Linux"
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    probe = command(expose, (), tmp_bytes, privileged=os.geteuid() == 0)
    try:
        done = subprocess.run(
            [*probe, sys.executable, "-I", "-c", "import numpy"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap did not run: {exc}"
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    why = lines[-1].strip() if lines else f"exit status {done.returncode}"
    blocker = None if os.geteuid() == 0 else forbidden()
    if blocker and ("namespace" in why or "uid map" in why):
        return f"bubblewrap cannot make the user namespace it needs ({why}): {blocker}"
    return f"bubblewrap cannot make a sandbox here ({why})"
