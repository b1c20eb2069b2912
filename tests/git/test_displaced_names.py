"""``.git/plangate-displaced/``: a plan folder's name never reaches outside it (round 122,
``log-edit-overwritten``; :mod:`controller.git.displaced`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.git import displaced


@pytest.mark.parametrize(
    "plan",
    ["plans/x", "plans/../../etc", "..", ".", "", "plans/a\nb", "plans/\u202eevil", "p" * 600],
)
def test_a_plan_folder_is_one_safe_folder_name(plan: str) -> None:
    name = displaced.folder_name(plan)
    assert "/" not in name and name not in ("", ".", "..") and len(name) <= 200
    assert all(c.isascii() and (c.isalnum() or c in "._-%~") for c in name), name


def test_names_are_distinct() -> None:
    names = ["plans/x", "plans%2Fx", "plans/x/y", "plans/x_y", "p" * 600, "p" * 601]
    assert len({displaced.folder_name(n) for n in names}) == len(names)


def test_saved_and_listed(tmp_path: Path) -> None:
    git_dir = tmp_path / ".git"
    git_dir.mkdir()
    saved = displaced.save(git_dir, "plans/x", "20261207T000000Z-abc", "EXECUTION_LOG.md", b"a\n")
    assert saved == git_dir / "plangate-displaced" / "plans%2Fx" / "20261207T000000Z-abc" / (
        "EXECUTION_LOG.md"
    )
    assert saved.read_bytes() == b"a\n"
    got = displaced.listed(git_dir, ["plans/x", "plans/y"], tmp_path)
    assert got == {
        "plans/x": [".git/plangate-displaced/plans%2Fx/20261207T000000Z-abc/EXECUTION_LOG.md"]
    }


def test_a_link_in_the_way_is_never_followed(tmp_path: Path) -> None:
    git_dir, elsewhere = tmp_path / ".git", tmp_path / "elsewhere"
    git_dir.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, git_dir / "plangate-displaced")
    with pytest.raises(OSError):
        displaced.save(git_dir, "plans/x", "s", "EXECUTION_LOG.md", b"a\n")
    assert list(elsewhere.iterdir()) == []
    assert displaced.listed(git_dir, ["plans/x"], tmp_path) == {}
