"""_ext/normlab_student.py: the download is remade when lib/ or a notebook changes, only then."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from book_pages import REPO, load_extension
from student_route import BUNDLE, bundle_members

from normlab.grading import ASSIGNMENTS

pytestmark = pytest.mark.slow  # builds the wheel with pip, twice


def _load():
    return load_extension("normlab_student")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of what the download is made of: pyproject.toml, README.md, lib/, exercises/."""
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, copy)
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", ".ipynb_checkpoints")
    shutil.copytree(REPO / "lib", copy / "lib", ignore=skip)
    shutil.copytree(REPO / "exercises", copy / "exercises", ignore=skip)
    return copy


def test_a_no_change_build_reuses_the_download_and_a_change_remakes_it(repo, tmp_path):
    ext = _load()
    site, stamp = tmp_path / "html", tmp_path / "doctrees" / ext.STAMP_NAME
    bundle = site / "downloads" / f"{BUNDLE}.zip"
    assert ext.publish(repo, site, stamp) is True
    first = bundle.stat().st_mtime_ns
    assert ext.publish(repo, site, stamp) is False
    assert bundle.stat().st_mtime_ns == first

    notebook = repo / "exercises" / ASSIGNMENTS[1] / f"{ASSIGNMENTS[1]}.ipynb"
    notebook.write_text(notebook.read_text().replace("Problem set 2", "Problem set two"))
    assert ext.publish(repo, site, stamp) is True
    assert bundle_members(bundle)[notebook.name] == notebook.read_bytes()

    layer_norm = repo / "lib" / "normlab" / "layer_norm.py"
    layer_norm.write_text(layer_norm.read_text() + "\n# a change\n")
    assert ext.publish(repo, site, stamp) is True
    (wheel,) = (site / "downloads").glob("normlab-*.whl")
    assert ext.publish(repo, site, stamp) is False
    (wheel_again,) = (site / "downloads").glob("normlab-*.whl")
    assert wheel_again == wheel


def test_a_deleted_download_is_made_again_even_with_a_fresh_stamp(repo, tmp_path):
    ext = _load()
    site, stamp = tmp_path / "html", tmp_path / "doctrees" / ext.STAMP_NAME
    ext.publish(repo, site, stamp)
    shutil.rmtree(site / "downloads")
    assert ext.publish(repo, site, stamp) is True
    assert (site / "downloads" / f"{BUNDLE}.zip").is_file()


def test_the_same_inputs_give_the_same_bytes(repo, tmp_path):
    ext = _load()
    one, two = tmp_path / "one", tmp_path / "two"
    ext.publish(repo, one, tmp_path / "stamp-one")
    ext.publish(repo, two, tmp_path / "stamp-two")
    zip_name = f"{BUNDLE}.zip"
    assert (one / "downloads" / zip_name).read_bytes() == (
        two / "downloads" / zip_name
    ).read_bytes()


def test_a_missing_release_is_a_clear_error(repo, tmp_path):
    ext = _load()
    (repo / "exercises" / ASSIGNMENTS[0] / f"{ASSIGNMENTS[0]}.ipynb").unlink()
    with pytest.raises(Exception, match="released notebooks missing"):
        ext.publish(repo, tmp_path / "html", tmp_path / "stamp")


def test_the_hash_leaves_out_what_the_wheel_leaves_out(repo):
    ext = _load()
    package = repo / "lib" / "normlab"
    leftovers = [
        package / "__pycache__" / "layer_norm.cpython-312.pyc",
        package / "stray.pyc",
        package / "normlab.egg-info" / "PKG-INFO",
    ]
    for path in leftovers:
        path.parent.mkdir(exist_ok=True)
        path.write_text("a build leftover")
    hashed = set(ext.inputs(repo))
    assert package / "layer_norm.py" in hashed
    assert not hashed & set(leftovers)
    # and the hash takes exactly the files that build_wheel's copy of the packages takes
    copied = set()
    for name in ext.PACKAGES:
        into = repo.parent / "copied" / name
        shutil.copytree(repo / "lib" / name, into, ignore=shutil.ignore_patterns(*ext.LEFT_OUT))
        copied |= {Path(name) / p.relative_to(into) for p in into.rglob("*") if p.is_file()}
    lib = repo / "lib"
    assert {p.relative_to(lib) for p in hashed if p.is_relative_to(lib)} == copied
