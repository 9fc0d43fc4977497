"""Weak isolation is only ever asked for: where bubblewrap cannot sandbox, the default refuses
(test_parity.py shows it on the command line, with a bwrap that fails)."""

from __future__ import annotations

import pytest

from normlab.course.grader import bwrap
from normlab.course.grader import isolation as iso


def test_without_bubblewrap_auto_and_strict_refuse_in_one_line_with_the_remedy(monkeypatch):
    monkeypatch.setattr(bwrap.shutil, "which", lambda name: None)
    for mode in ("auto", "strict"):
        with pytest.raises(SystemExit) as refused:
            iso.choose(mode, None, None, 2, iso.Limits())
        [line] = str(refused.value).splitlines()
        assert "without strict isolation: bubblewrap is not installed" in line
        assert "apt-get install bubblewrap" in line and "user namespaces" in line
        assert "pass --isolation basic" in line


def test_basic_is_given_when_asked_for_without_probing_bubblewrap(monkeypatch):
    def probe(*args):
        raise AssertionError("basic isolation must not depend on bubblewrap")

    monkeypatch.setattr(bwrap, "unavailable", probe)
    chosen = iso.choose("basic", None, None, 2, iso.Limits())
    assert chosen.mode == "basic" and chosen.hide == ()


def test_a_torch_assignment_refuses_where_torch_is_missing(monkeypatch):
    """ps8's cells would all score 0 without torch: the grader says so instead, whatever the
    isolation."""
    found = iso.importlib.util.find_spec
    monkeypatch.setattr(
        iso.importlib.util, "find_spec", lambda name: None if name == "torch" else found(name)
    )
    for mode in ("auto", "basic"):
        with pytest.raises(SystemExit) as refused:
            iso.choose(mode, None, None, 2, iso.Limits(), real_torch=True)
        [line] = str(refused.value).splitlines()
        assert "torch is not installed" in line and "normlab[torch]" in line
    assert iso.choose("basic", None, None, 2, iso.Limits()).mode == "basic"
