"""Writes and reads in a working tree someone else also writes: never through a link."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from controller import fsutil
from controller.errors import UnsafePath


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A working tree with ``plans/a`` (a folder) and ``plans/b`` (a link to a folder
    outside it, as an agent swaps one in), and that outside folder."""
    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "plans" / "a").mkdir(parents=True)
    outside.mkdir()
    (outside / "PLAN.yml").write_text("theirs\n")
    (root / "plans" / "b").symlink_to(outside)
    return root, outside


def test_a_write_below_the_root_lands_in_place(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    target = root / "plans" / "a" / "PLAN.yml"
    fsutil.write_atomic(target, "one\n", root=root)
    fsutil.write_atomic(target, "two\n", root=root)
    assert target.read_text() == "two\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # as mkstemp made it
    assert sorted(os.listdir(target.parent)) == ["PLAN.yml"]  # no temp file left
    assert fsutil.read_regular(target, root=root) == b"two\n"


@pytest.mark.parametrize("many", [False, True])
def test_nothing_is_written_through_a_linked_folder(tree: tuple[Path, Path], many: bool) -> None:
    """Round 14: a plan folder swapped for a link made the controller write outside."""
    root, outside = tree
    target = root / "plans" / "b" / "PLAN.yml"
    with pytest.raises(UnsafePath) as raised:
        if many:
            fsutil.write_atomic_many([(root / "plans/a/x", b"x"), (target, b"mine")], root=root)
        else:
            fsutil.write_atomic(target, "mine\n", root=root)
    assert "plans/b" in raised.value.message
    assert sorted(os.listdir(outside)) == ["PLAN.yml"]
    assert (outside / "PLAN.yml").read_text() == "theirs\n"
    assert not any(name.endswith(".tmp") for name in os.listdir(root / "plans" / "a"))


def test_nothing_is_read_through_a_linked_folder(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with pytest.raises(UnsafePath):
        fsutil.read_regular(root / "plans" / "b" / "PLAN.yml", root=root)
    assert fsutil.read_regular(root / "plans" / "b" / "PLAN.yml") == b"theirs\n"  # no root


def test_a_file_where_a_folder_should_be_is_unsafe(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    (root / "plans" / "c").write_text("a file\n")
    with pytest.raises(UnsafePath):
        fsutil.write_atomic(root / "plans" / "c" / "PLAN.yml", "x", root=root)


def test_the_root_itself_may_be_reached_through_a_link(tree: tuple[Path, Path]) -> None:
    """The operator's path to the repository is theirs (say /srv/plans -> /data/plans)."""
    root, _ = tree
    alias = root.parent / "alias"
    alias.symlink_to(root)
    fsutil.write_atomic(alias / "plans" / "a" / "LOG", "ok", root=alias)
    assert (root / "plans" / "a" / "LOG").read_text() == "ok"


def test_a_path_outside_the_root_is_refused(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    with pytest.raises(UnsafePath):
        fsutil.write_atomic(outside / "PLAN.yml", "x", root=root)
