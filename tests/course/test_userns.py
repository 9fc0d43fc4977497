"""The refusal names the host setting that forbids a normal user's bwrap its user namespace, and
the fix. Here on /proc/sys trees written by the test; `.ci/userns-refusal` runs the grader as a
normal user where the kernel really allows no user namespace."""

from __future__ import annotations

from pathlib import Path

import pytest

from normlab.course.grader import bwrap

REPO = Path(__file__).resolve().parents[2]
ALLOWED = {
    "user/max_user_namespaces": "15000",
    "kernel/unprivileged_userns_clone": "1",
    "kernel/apparmor_restrict_unprivileged_userns": "0",
}


def proc_sys(tmp_path: Path, **changed: str) -> str:
    """A /proc/sys holding the three settings: ALLOWED's values, but `changed` (a setting's
    name with '__' for '/'; the value None leaves the file out, as a kernel without it)."""
    values = ALLOWED | {name.replace("__", "/"): value for name, value in changed.items()}
    for name, value in values.items():
        if value is not None:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(f"{value}\n")
    return str(tmp_path)


def test_a_host_that_allows_user_namespaces_forbids_nothing(tmp_path):
    assert bwrap.forbidden(proc_sys(tmp_path)) is None
    missing = {name.replace("/", "__"): None for name in ALLOWED}
    assert bwrap.forbidden(proc_sys(tmp_path / "bare", **missing)) is None


def test_no_user_namespaces_at_all_names_the_limit_and_the_sysctl(tmp_path):
    line = bwrap.forbidden(proc_sys(tmp_path, user__max_user_namespaces="0"))
    assert line.startswith("user.max_user_namespaces is 0 here")
    assert "sysctl -w user.max_user_namespaces=" in line and "/etc/sysctl.d/" in line


def test_apparmors_restriction_names_both_fixes(tmp_path):
    setting = "kernel__apparmor_restrict_unprivileged_userns"
    line = bwrap.forbidden(proc_sys(tmp_path, **{setting: "1"}))
    assert line.startswith("kernel.apparmor_restrict_unprivileged_userns is 1 here")
    assert "AppArmor profile with the rule `userns`" in line
    assert "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in line


def test_debians_switch_names_its_sysctl(tmp_path):
    line = bwrap.forbidden(proc_sys(tmp_path, kernel__unprivileged_userns_clone="0"))
    assert "sysctl -w kernel.unprivileged_userns_clone=1" in line


def test_every_setting_that_forbids_is_named_in_one_line(tmp_path):
    changed = {
        "user__max_user_namespaces": "0",
        "kernel__apparmor_restrict_unprivileged_userns": "1",
    }
    line = bwrap.forbidden(proc_sys(tmp_path, **changed))
    assert "\n" not in line
    assert (
        "user.max_user_namespaces is 0" in line
        and "apparmor_restrict_unprivileged_userns is 1" in line
    )


@pytest.mark.parametrize(
    "needed", ["/usr/bin/bwrap", "userns,", "apparmor_parser -r /etc/apparmor.d/bwrap"]
)
def test_the_profile_the_refusal_points_to_is_on_the_threat_model_page(needed):
    assert "instructors/threat_model.md" in bwrap.APPARMOR_PROFILE
    assert needed in (REPO / "instructors" / "threat_model.md").read_text()
