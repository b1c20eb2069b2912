"""Files in the git directory that would hang git, and git commands that hang for any
reason: refused or stopped with ``E_GIT`` naming the cause, never a silent stall (round 9).
Real repositories, real FIFOs, a real socket; each test bounds itself with a thread so a
regression fails instead of hanging the suite."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.errors import GitError
from controller.git.gitrepo import GitRepo
from tests.support.gitkit import commit_all, git


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s result or exception, or fail when it has not returned in ``seconds``."""
    found: dict[str, Any] = {}

    def target() -> None:
        try:
            found["value"] = call()
        except BaseException as exc:  # handed to the test below
            found["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: a stall"
    if "error" in found:
        raise found["error"]
    return found.get("value")


def _fifo_for(repo: Path, sha: str) -> None:
    """A FIFO in place of the loose object ``sha``: git waits on it for ever."""
    loose = repo / ".git/objects" / sha[:2] / sha[2:]
    loose.chmod(0o644)
    loose.unlink()
    os.mkfifo(loose)


@pytest.mark.parametrize(
    "where",
    [
        "config",
        "index",
        "packed-refs",
        "logs/HEAD",
        "info/attributes",
        "objects/info/alternates",
        "refs/heads/topic",
    ],
)
def test_a_fifo_in_the_git_dir_is_refused_naming_it(repo: Path, where: str) -> None:
    commit_all(repo, "first")
    path = repo / ".git" / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    with pytest.raises(GitError) as caught:
        _within(20, lambda: GitRepo(repo))
    assert str(path) in caught.value.message and "FIFO" in caught.value.message
    assert f"rm {path}" in caught.value.remedy


def test_a_fifo_made_after_opening_is_refused_by_the_next_health_check(repo: Path) -> None:
    commit_all(repo, "first")
    gitrepo = GitRepo(repo)
    gitrepo.check_health()
    os.mkfifo(repo / ".git/info/exclude.new")
    with pytest.raises(GitError, match=r"exclude\.new"):
        _within(20, gitrepo.check_health)


def test_a_socket_in_the_git_dir_is_fine(repo: Path) -> None:
    """git's own fsmonitor daemon keeps a socket in .git; opening one fails at once."""
    commit_all(repo, "first")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(repo / ".git/fsmonitor--daemon.ipc"))
        gitrepo = _within(20, lambda: GitRepo(repo))
        gitrepo.check_health()
        assert gitrepo.rev("HEAD")
    finally:
        server.close()


def test_a_git_command_that_hangs_is_stopped_after_the_timeout(repo: Path) -> None:
    """The object store is not walked (it can hold 100,000 files): a FIFO in place of a
    loose object hangs git; the timeout stops it and names the command."""
    (repo / "a.txt").write_text("a\n")
    commit_all(repo, "first")
    blob = git(repo, "rev-parse", "HEAD:a.txt").strip()
    _fifo_for(repo, blob)
    gitrepo = GitRepo(repo)
    gitrepo.timeout = 1.0
    with pytest.raises(GitError) as caught:
        _within(20, lambda: gitrepo.run("cat-file", "-p", blob))
    # stopped at its own bound and said so (no timing assert: the message names the bound)
    assert "git cat-file -p did not finish within 1 s" in caught.value.message
    assert "execution.git_timeout" in caught.value.remedy


@pytest.mark.parametrize("lock", ["refs/heads/main.lock", "HEAD.lock"])
def test_a_stale_ref_lock_is_an_error_naming_it_not_a_lost_race(repo: Path, lock: str) -> None:
    commit_all(repo, "first")
    head = git(repo, "rev-parse", "HEAD").strip()
    gitrepo = GitRepo(repo)
    (repo / ".git" / lock).write_text("")
    with pytest.raises(GitError) as caught:
        gitrepo.update_ref("refs/heads/main", head, head)
    assert lock in caught.value.message and "remove" in caught.value.remedy
    (repo / ".git" / lock).unlink()
    assert gitrepo.update_ref("refs/heads/main", head, head)


def test_a_ref_that_moved_is_still_a_lost_race(repo: Path) -> None:
    commit_all(repo, "first")
    head = git(repo, "rev-parse", "HEAD").strip()
    gitrepo = GitRepo(repo)
    assert not gitrepo.update_ref("refs/heads/main", head, "0" * 39 + "1")


@pytest.mark.parametrize("read", ["blob", "read_file"])
def test_a_persistent_reader_that_hangs_is_stopped_after_the_timeout(repo: Path, read: str) -> None:
    """GitPython's persistent ``cat-file`` (the approval path's reads) waits on a FIFO in the
    object store as long as git does: the deadline kills it, the read fails with E_GIT, and
    the next read, once the FIFO is gone, works with a new ``cat-file``."""
    (repo / "a.txt").write_text("a\n")
    commit_all(repo, "first")
    blob = git(repo, "rev-parse", "HEAD:a.txt").strip()
    loose = repo / ".git/objects" / blob[:2] / blob[2:]
    kept = loose.read_bytes()
    _fifo_for(repo, blob)
    gitrepo = GitRepo(repo)
    gitrepo.timeout = 1.0
    call = (
        (lambda: gitrepo.blob(blob))
        if read == "blob"
        else lambda: gitrepo.read_file("HEAD", "a.txt")
    )
    with pytest.raises(GitError) as caught:
        _within(20, call)
    assert "git cat-file did not answer within 1 s" in caught.value.message
    loose.unlink()
    loose.write_bytes(kept)
    assert _within(20, call) == b"a\n"


def test_a_streamed_log_that_hangs_is_stopped_after_the_timeout(repo: Path) -> None:
    """``git log`` read as it streams (the history index's scans): a read that gets nothing
    for the timeout ends in E_GIT."""
    (repo / "plans").mkdir()
    (repo / "plans/a.txt").write_text("a\n")
    commit_all(repo, "first")
    (repo / "plans/a.txt").write_text("b\n")
    commit_all(repo, "second")
    _fifo_for(repo, git(repo, "rev-parse", "HEAD~1").strip())
    gitrepo = GitRepo(repo)
    gitrepo.timeout = 1.0
    head = git(repo, "rev-parse", "HEAD").strip()
    with pytest.raises(GitError) as caught:
        _within(20, lambda: list(gitrepo.first_parent_log(None, head, ["plans"])))
    assert "did not answer within 1 s" in caught.value.message
