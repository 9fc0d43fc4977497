"""The bubblewrap command line: what the kernel's world is built from."""

from __future__ import annotations

from normlab.course.grader import bwrap


def _pairs(args: list[str], option: str) -> list[tuple[str, str]]:
    return [(args[i + 1], args[i + 2]) for i, a in enumerate(args) if a == option]


def test_exposed_folders_are_read_only_and_reachable(tmp_path):
    env = tmp_path / "course" / ".venv"
    env.mkdir(parents=True)
    args = bwrap.command([str(env)], [], 1 << 20, privileged=False)
    assert (str(env), str(env)) in _pairs(args, "--ro-bind")
    made = [args[i + 3] for i, a in enumerate(args) if a == "--perms" and args[i + 2] == "--dir"]
    assert str(tmp_path / "course") in made  # 755 on the way, not bwrap's 700
    assert not any(a == "--bind" for a in args)  # nothing of the host is writable


def test_a_course_folder_inside_an_exposed_one_is_covered(tmp_path):
    exposed = tmp_path / "site"
    (exposed / "exchange").mkdir(parents=True)
    (exposed / "gradebook.db").write_text("")
    hide = [str(exposed / "exchange"), str(exposed / "gradebook.db"), str(tmp_path / "elsewhere")]
    args = bwrap.command([str(exposed)], hide, 1 << 20, privileged=False)
    tmpfs = [args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"]
    assert str(exposed / "exchange") in tmpfs
    assert ("/dev/null", str(exposed / "gradebook.db")) in _pairs(args, "--ro-bind")
    assert str(tmp_path / "elsewhere") not in args  # not exposed: not there to hide


def test_namespaces_and_the_user_namespace_by_who_runs_it():
    for privileged in (True, False):
        args = bwrap.command([], [], 1 << 20, privileged=privileged)
        assert {"--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent"} <= set(args)
        assert ("--unshare-user" in args) is not privileged
        assert args[-1] == "--"
        assert ["--size", str(1 << 20), "--tmpfs", "/tmp"] == args[
            args.index("/tmp") - 3 : args.index("/tmp") + 1
        ]
