"""``GitRepo.push`` tells a refusal by the remote's hook or policy (``PushRefused``, with the
remote's reason) from a lost race (False) and from a remote it cannot reach (``E_GIT``):
round 40, a forge's push protection. Real git: a bare repository with a pre-receive hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.errors import GitError, PushHeld, PushRefused
from controller.git.gitrepo import GitRepo
from tests.support.gitenv import commit_all, git

OWNER = ("Owner", "owner@example.com")


def _setup(tmp_path: Path) -> tuple[Path, Path, GitRepo]:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "README").write_text("plans\n")
    commit_all(seed, "initial", OWNER)
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    git(seed, "remote", "add", "origin", str(bare))
    repo = GitRepo.clone_bare(f"file://{bare}", tmp_path / "clone", "main")
    return seed, bare, repo


def _commit_on(repo: GitRepo, message: str) -> None:
    tip = repo.run("rev-parse", "refs/heads/main").strip()
    new = repo.run("commit-tree", "-p", tip, "-m", message, f"{tip}^{{tree}}").strip()
    repo.run("update-ref", "refs/heads/main", new, tip)


def test_a_hook_refusal_is_push_refused_with_the_remote_reason(tmp_path: Path) -> None:
    _seed, bare, repo = _setup(tmp_path)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'push protection: a token in the diff' >&2\nexit 1\n")
    hook.chmod(0o755)
    _commit_on(repo, "plangate: complete plans/leak")
    with pytest.raises(PushRefused) as info:
        repo.push("origin", "main")
    assert info.value.code == "E_GIT"
    assert "pre-receive hook declined" in info.value.reason
    assert "push protection: a token in the diff" in info.value.reason


def test_a_lost_race_is_false_and_an_unreachable_remote_e_git(tmp_path: Path) -> None:
    seed, _bare, repo = _setup(tmp_path)
    (seed / "other").write_text("x\n")
    commit_all(seed, "someone else", OWNER)
    git(seed, "push", "-q", "origin", "main")
    _commit_on(repo, "plangate: start plans/a")
    assert repo.push("origin", "main") is False  # the remote moved on: not a refusal
    repo.run("remote", "set-url", "origin", f"file://{tmp_path / 'gone.git'}")
    with pytest.raises(GitError) as info:
        repo.push("origin", "main")
    assert not isinstance(info.value, PushRefused)


def test_a_branch_named_like_the_pushed_one_neither_blocks_nor_takes_the_push(
    tmp_path: Path,
) -> None:
    """Round 79: a branch named ``refs/heads/main`` on the remote (the ref
    ``refs/heads/refs/heads/main``) made ``git push origin refs/heads/main:refs/heads/main``
    fail "matches more than one". The push lands on ``main`` alone, a lost race is still
    False, and a stale ref left in the controller's push namespace is never pushed."""
    seed, bare, repo = _setup(tmp_path)
    look_alike = "refs/heads/refs/heads/main"
    git(seed, "push", "-q", "origin", f"HEAD:{look_alike}")
    repo.run("update-ref", "refs/plangate/push/other", "refs/heads/main")  # a crash's leftover
    _commit_on(repo, "plangate: start plans/a")
    assert repo.push("origin", "main") is True
    mine = repo.run("rev-parse", "refs/heads/main").strip()
    assert git(seed, "--git-dir", str(bare), "rev-parse", "refs/heads/main").strip() == mine
    refs = git(seed, "--git-dir", str(bare), "for-each-ref", "--format=%(refname)").split()
    assert sorted(refs) == ["refs/heads/main", look_alike]
    assert repo.run("for-each-ref", "--format=%(refname)", "refs/plangate/").split() == [
        "refs/plangate/push/main"
    ]
    git(seed, "pull", "-q", "--ff-only", "origin", "refs/heads/main")
    (seed / "other").write_text("x\n")
    commit_all(seed, "someone else", OWNER)  # plain `git push origin main` is ambiguous now
    git(seed, "--git-dir", str(bare), "fetch", "-q", str(seed), "refs/heads/main:refs/heads/main")
    _commit_on(repo, "plangate: complete plans/a")
    assert repo.push("origin", "main") is False  # a lost race, read as before
    fetched = repo.fetch("origin", "main")  # the fetch takes main itself
    assert fetched == git(seed, "rev-parse", "HEAD").strip()
    # with no branch main on the remote, git would take the look-alike in its place: never
    git(seed, "--git-dir", str(bare), "update-ref", "-d", "refs/heads/main")
    with pytest.raises(GitError) as info:
        repo.fetch("origin", "main")
    assert "no branch main" in info.value.message


def test_a_lock_a_killed_push_left_in_the_own_namespace_is_no_ref_and_no_stop(
    tmp_path: Path,
) -> None:
    """CI, 2026-12-01: a SIGKILL inside the push namespace's transaction left
    ``refs/plangate/push/main.lock``; it was listed as a ref to delete ("invalid ref
    format") and every later pass failed. Only the controller writes that namespace, under
    its state lock, so the lock is a dead controller's: the push goes on."""
    _seed, bare, repo = _setup(tmp_path)
    _commit_on(repo, "plangate: start plans/a")
    assert repo.push("origin", "main") is True
    stale = repo.common_dir / "refs" / "plangate" / "push" / "main.lock"
    stale.write_text("0" * 40 + "\n")
    _commit_on(repo, "plangate: complete plans/a")
    assert repo.push("origin", "main") is True
    tip = git(bare, "log", "-1", "--format=%s", "main").strip()
    assert tip == "plangate: complete plans/a"
    assert not stale.exists()


def test_a_new_commit_the_remote_already_held_is_push_held_not_pushed(tmp_path: Path) -> None:
    """Round 91 (twinrun): a second process that made the very same commit found it on the
    remote; git answers "up to date", exit 0. For a commit just made that is no push of
    ours (``PushHeld``); a leftover commit re-pushed after a crash reads as before."""
    _seed, bare, repo = _setup(tmp_path)
    _commit_on(repo, "plangate: start plans/a")
    tip = repo.run("rev-parse", "refs/heads/main").strip()
    assert repo.push("origin", "main", new=True) is True  # it moved the remote's branch
    assert git(bare, "rev-parse", "refs/heads/main").strip() == tip
    with pytest.raises(PushHeld) as info:
        repo.push("origin", "main", new=True)  # the same bytes again: someone else's push
    assert info.value.code == "E_GIT"
    assert "up to date" in info.value.message
    assert repo.push("origin", "main") is True


def test_the_own_clone_s_stale_ref_locks_are_removed(tmp_path: Path) -> None:
    _seed, _bare, repo = _setup(tmp_path)
    (repo.git_dir / "HEAD.lock").write_text("x\n")
    (repo.common_dir / "refs" / "heads" / "main.lock").write_text("x\n")
    assert sorted(repo.clear_own_locks()) == ["HEAD.lock", "refs/heads/main.lock"]
    _commit_on(repo, "plangate: start plans/a")
    assert repo.push("origin", "main", new=True) is True
