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


def test_a_write_sets_or_clears_the_executable_bits_as_asked(tmp_path: Path) -> None:
    """Round 87: a working-tree file written beside a commit gets the commit's executable
    bit (``executable``), whatever the file it replaces had; None keeps the old mode."""
    from controller.fsutil import write_atomic, write_atomic_many

    plain, tool = tmp_path / "plain", tmp_path / "tool"
    plain.write_text("a\n")
    os.chmod(plain, 0o755)
    write_atomic(plain, "b\n", executable=False)
    assert plain.stat().st_mode & 0o777 == 0o644
    write_atomic(plain, "c\n")
    assert plain.stat().st_mode & 0o777 == 0o644
    write_atomic(tool, "new\n", executable=True)  # a new file: 0600, the owner's bit added
    assert tool.stat().st_mode & 0o777 == 0o700
    os.chmod(tool, 0o640)
    write_atomic_many([(tool, b"x\n"), (plain, b"y\n")], executable={tool: True})
    assert (tool.stat().st_mode & 0o777, plain.stat().st_mode & 0o777) == (0o750, 0o644)


def test_path_in_repo_is_the_part_after_the_repository_as_written(tmp_path: Path) -> None:
    """Round 98: one rule for an absolute plan path, the CLI's and MCP's: the part after the
    repository (reached through a link or not) as written, no link in it read; None outside."""
    from controller.fsutil import path_in_repo

    repo = tmp_path / "repo"
    (repo / "plans" / "p").mkdir(parents=True)
    (repo / "plans" / "s").symlink_to("p")
    (tmp_path / "via").symlink_to(repo)
    assert path_in_repo(f"{repo}/plans/p", repo) == "plans/p"
    assert path_in_repo(f"{tmp_path}/via/plans/s", repo) == "plans/s"  # the link inside kept
    assert path_in_repo(f"{repo}/plans/q/../p", repo) == "plans/q/../p"  # as written
    assert path_in_repo(str(repo), repo) == ""
    assert path_in_repo("/plans/p", repo) is None
    assert path_in_repo(f"{tmp_path}/plans/p", repo) is None
