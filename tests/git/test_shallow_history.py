"""History git holds shallow is refused ``E_GIT`` wherever git marks it (round 79): the
``shallow`` file of a repository, of a linked worktree's repository, of the controller's own
object store (local mode); and a remote-mode clone or fetch that the remote serves shallow.
Real git: repositories made with ``git clone --depth`` over ``file://``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from controller.errors import GitError
from controller.git.gitrepo import GitRepo
from tests.support.gitenv import commit_all, git

OWNER = ("Owner", "owner@example.com")


def _seed(tmp_path: Path, commits: int = 3) -> Path:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    for i in range(commits):
        (seed / "f").write_text(f"{i}\n")
        commit_all(seed, f"c{i}", OWNER)
    return seed


def test_a_linked_worktree_of_a_shallow_clone_is_refused_by_the_pass_check(
    tmp_path: Path,
) -> None:
    """The ``shallow`` file lives in the common git directory, not in a linked worktree's
    own: the check reads both."""
    seed = _seed(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{seed}", str(clone))
    linked = tmp_path / "linked"
    git(clone, "worktree", "add", "-q", "-b", "side", str(linked))
    repo = GitRepo(linked)
    with pytest.raises(GitError) as info:
        repo.check_health()
    assert info.value.code == "E_GIT" and "--unshallow" in info.value.remedy
    assert Path(info.value.path).resolve() == (clone / ".git" / "shallow").resolve()


def test_a_shallow_file_in_the_controllers_store_is_refused(tmp_path: Path) -> None:
    seed = _seed(tmp_path)
    store = tmp_path / "store"
    repo = GitRepo(seed, store=store)
    repo.check_health()
    (store / "shallow").write_text(git(seed, "rev-parse", "HEAD").strip() + "\n")
    with pytest.raises(GitError) as info:
        repo.check_health()
    assert info.value.path == str(store / "shallow") and str(store) in info.value.remedy


def test_a_clone_of_a_shallow_remote_is_refused_and_not_kept(tmp_path: Path) -> None:
    seed = _seed(tmp_path)
    served = tmp_path / "served.git"
    git(tmp_path, "clone", "-q", "--bare", "--depth", "1", f"file://{seed}", str(served))
    target = tmp_path / "state" / "clone"
    with pytest.raises(GitError) as info:
        GitRepo.clone_bare(f"file://{served}", target, "main")
    assert "shallow" in info.value.message and "--unshallow" in info.value.remedy
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_a_fetch_the_remote_serves_cut_off_is_refused_every_time(tmp_path: Path) -> None:
    """git rejects the ref with a warning and exits 0; the tracking ref stays behind."""
    seed = _seed(tmp_path)
    served = tmp_path / "served.git"
    git(tmp_path, "clone", "-q", "--bare", f"file://{seed}", str(served))
    repo = GitRepo.clone_bare(f"file://{served}", tmp_path / "clone", "main")
    before = repo.fetch("origin", "main")
    for i in range(2):  # two commits: the boundary's parent is one the clone never saw
        (seed / "f").write_text(f"new {i}\n")
        commit_all(seed, f"new {i}", OWNER)
    shutil.rmtree(served)
    git(tmp_path, "clone", "-q", "--bare", "--depth", "1", f"file://{seed}", str(served))
    for _ in range(2):
        with pytest.raises(GitError) as info:
            repo.fetch("origin", "main")
        assert "shallow" in info.value.message and "--unshallow" in info.value.remedy
    assert repo.rev("refs/remotes/origin/main") == before
    assert not (repo.common_dir / "shallow").exists()
