"""Lock a freshly forked sandbox kernel in before it runs any student code.

Two levels, chosen by the grader (see instructors/threat_model.md):

- "strict" (the grader runs as root, Linux): a private mount, network and IPC namespace and
  a new root (chroot) built from an allow-list: the operating system's /usr (and /bin, /lib
  links), a few files of /etc (the dynamic linker's cache, the time zone, fonts), /dev/null,
  zero, full, random and urandom, /proc, the Python installation and its site-packages, all
  read-only, and small private tmpfs for /tmp (the working folder) and /dev/shm. Nothing else
  exists for the kernel: not the course, not the repository, not home directories, not the
  exchange, not the network. Then the process drops to an unprivileged uid of its own (one
  per grading slot) with no supplementary groups and no_new_privs.
- "basic" (any user): a private temporary working directory and a scrubbed environment only.

Both levels: a new session (so the grader can kill the whole process group), death with the
zygote that forked it (so a killed grader leaves no kernel behind), every inherited
file descriptor closed except the kernel's socket, stdin/stdout/stderr on /dev/null, and
resource limits on address space, CPU seconds, file size, open files, core dumps and (strict)
processes. The submission's files (but its notebooks, whose autograded copies hold the restored
hidden tests) are read into memory before anything is hidden and written into the private
working directory afterwards.

Standard library only: this runs in the sandbox kernel, which never imports the reference.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import tempfile

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
NEW_ROOT = "/tmp"  # the kernel's root is a tmpfs mounted here, in its own namespace
OS_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts", "mime.types")
DEV_NODES = ("null", "zero", "full", "random", "urandom")
MAX_FILES_BYTES = 256 * 1024 * 1024  # a submission folder larger than this is refused

_libc = ctypes.CDLL(None, use_errno=True)


class JailError(RuntimeError):
    """The sandbox could not be set up; the kernel must not run student code."""


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise JailError(f"{what} failed: {os.strerror(errno)} (errno {errno})")


def _mount(source, target, fstype, flags, data=None) -> None:
    enc = lambda s: None if s is None else os.fsencode(s)  # noqa: E731
    _check(
        _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)),
        f"mount {fstype or 'bind'} on {target}",
    )


def read_files(folder: str) -> list[tuple[str, bytes]]:
    """Every regular file under `folder` as (relative path, content), but notebooks (the
    autograded copy holds the restored hidden tests) and symlinks."""
    files, total = [], 0
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for name in names:
            path = os.path.join(root, name)
            if name.endswith(".ipynb") or os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                data = handle.read(MAX_FILES_BYTES + 1 - total)
            total += len(data)
            if total > MAX_FILES_BYTES:
                raise JailError(f"the submission folder is larger than {MAX_FILES_BYTES} bytes")
            files.append((os.path.relpath(path, folder), data))
    return files


def write_files(folder: str, files, uid: int | None) -> None:
    """Write `files` under `folder` (made by `read_files`), owned by `uid` when given."""
    for rel, data in files:
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
    if uid is not None:
        for root, dirs, names in os.walk(folder):
            for name in dirs + names:
                os.chown(os.path.join(root, name), uid, uid)
        os.chown(folder, uid, uid)


def detach(keep_fd: int) -> None:
    """New session; stdio on /dev/null; close every inherited descriptor but `keep_fd`."""
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, keep_fd)
    os.closerange(keep_fd + 1, 1 << 16)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _bind(source: str, target: str, writable: bool = False) -> None:
    """Bind `source` (a path or /proc/self/fd/N) on `target`, read-only unless `writable`."""
    _mount(source, target, None, MS_BIND | MS_REC)
    if not writable:
        _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_REC)


def _mount_point(path: str, like: str) -> None:
    """An empty file or folder at `path` to mount `like` on."""
    if os.path.isdir(like):
        os.makedirs(path, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        open(path, "w").close()


def build_root(expose, hide, tmp_bytes: int) -> None:
    """Enter a new mount, network and IPC namespace whose root holds only what a kernel
    needs, and chroot into it (see the module docstring). `expose`: the Python installation
    and its site-packages (read-only); `hide`: paths covered again should they lie inside
    anything exposed (the exchange under /usr/local, say)."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    expose = sorted({os.path.abspath(p) for p in expose if os.path.isdir(p)})
    handles = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in expose}
    new = NEW_ROOT
    _mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=755")
    bound = []
    for name in OS_DIRS:
        source = "/" + name
        if os.path.islink(source):
            os.symlink(os.readlink(source), new + source)
        elif os.path.isdir(source):
            _mount_point(new + source, source)
            _bind(source, new + source)
            bound.append(source)
    for name in ETC_ENTRIES:
        source = "/etc/" + name
        if os.path.islink(source):
            os.makedirs(new + "/etc", mode=0o755, exist_ok=True)
            os.symlink(os.readlink(source), new + source)
        elif os.path.exists(source):
            _mount_point(new + source, source)
            _bind(source, new + source)
    for name in DEV_NODES:
        _mount_point(f"{new}/dev/{name}", f"/dev/{name}")
        _bind(f"/dev/{name}", f"{new}/dev/{name}", writable=True)
    for private in ("/tmp", "/dev/shm"):
        os.makedirs(new + private, mode=0o755, exist_ok=True)
        _mount("tmpfs", new + private, "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_bytes},mode=1777")
    os.makedirs(new + "/var", mode=0o755)
    os.symlink("/tmp", new + "/var/tmp")
    _mount_point(new + "/proc", "/proc")
    _bind("/proc", new + "/proc", writable=True)
    for path in expose:
        if any(_under(os.path.realpath(path), done) for done in bound):
            continue
        # the handle, not the path: a path under /tmp is covered by the new root by now
        source = f"/proc/self/fd/{handles[path]}"
        _mount_point(new + path, source)
        _bind(source, new + path)
        bound.append(path)
    for fd in handles.values():
        os.close(fd)
    for path in sorted({os.path.abspath(p) for p in hide}):
        inside = any(_under(path, done) and path != done for done in bound)
        if inside and os.path.lexists(new + path):
            if os.path.isdir(new + path):
                _mount("tmpfs", new + path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k")
            else:
                _bind("/dev/null", new + path)
    _mount(None, new, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(new)
    os.chroot(".")
    os.chdir("/")


def set_limits(limits: dict) -> None:
    """Lower the soft and hard limits (never raise them) for what the kernel may use."""
    table = {
        "memory_bytes": resource.RLIMIT_AS,
        "cpu_seconds": resource.RLIMIT_CPU,
        "file_bytes": resource.RLIMIT_FSIZE,
        "open_files": resource.RLIMIT_NOFILE,
        "processes": resource.RLIMIT_NPROC,
    }
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for key, which in table.items():
        value = limits.get(key)
        if value is None:
            continue
        soft, hard = resource.getrlimit(which)
        cap = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        resource.setrlimit(which, (cap, cap))


def drop_privileges(uid: int) -> None:
    """Become `uid` (and gid `uid`), with no supplementary groups and no way back."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(no_new_privs)")
    _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(dumpable)")
    if os.getuid() != uid or os.geteuid() != uid or os.getgid() != uid:
        raise JailError("the uid did not change")


def enter(spec: dict, keep_fd: int) -> str:
    """Apply `spec` to this (freshly forked) process and return its private working folder.

    spec keys: mode ("strict" or "basic"), uid (strict), hide and expose (path lists,
    strict), files_dir (the submission folder to copy in), workdir (basic: an empty private
    folder the grader made and removes), limits (see `set_limits`), tmp_bytes (strict: size
    of each private tmpfs), env (the environment, replaced whole).
    """
    detach(keep_fd)
    files = read_files(spec["files_dir"]) if spec.get("files_dir") else []
    if spec["mode"] == "strict":
        uid = int(spec["uid"])
        build_root(spec.get("expose", []), spec.get("hide", []), int(spec["tmp_bytes"]))
        workdir = "/tmp/work"
        os.mkdir(workdir, 0o700)
        write_files(workdir, files, uid)
        set_limits(spec["limits"])
        drop_privileges(uid)
    elif spec["mode"] == "basic":
        workdir = spec["workdir"]
        write_files(workdir, files, None)
        limits = dict(spec["limits"])
        limits.pop("processes", None)  # the grader's own uid: its other processes count too
        set_limits(limits)
    else:
        raise JailError(f"unknown isolation mode {spec['mode']!r}")
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(pdeathsig)")
    if os.getppid() == 1:  # the zygote is already gone
        os._exit(0)
    os.chdir(workdir)
    os.environ.clear()
    os.environ.update({**spec.get("env", {}), "HOME": workdir, "TMPDIR": workdir})
    tempfile.tempdir = None
    return workdir
