"""Which of the host's settings forbids a normal user the user namespace bubblewrap needs, and
the fix for each, in words a refusal can carry (`SETTINGS`, read from /proc/sys; see
`bwrap.unavailable`). Root's bwrap needs none. AppArmor's restriction is Ubuntu's default since
24.04 (https://ubuntu.com/blog/ubuntu-23-10-restricted-unprivileged-user-namespaces); bwrap then
fails with "setting up uid map: Permission denied". instructors/threat_model.md shows each fix.
"""

from __future__ import annotations

from pathlib import Path

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


def read_setting(name: str, proc_sys: str = "/proc/sys") -> str | None:
    """A sysctl's value as /proc/sys shows it to this process (None where it has none)."""
    try:
        return (Path(proc_sys) / name.replace(".", "/")).read_text().strip()
    except OSError:
        return None


def forbidden(proc_sys: str = "/proc/sys") -> str | None:
    """Each setting that forbids this user a user namespace, with its fix, in one line; None
    where none does."""
    found = [
        f"{name} is {value} here ({meaning}): {fix}"
        for name, value, meaning, fix in SETTINGS
        if read_setting(name, proc_sys) == value
    ]
    return "; ".join(found) or None
