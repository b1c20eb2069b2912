"""The one writer of a shared working tree (``controller.git.sharedwrite``: MCP ``submit``,
``plangate approve``/``reject``/``abort``) killed between its commit and its working-tree and
index writes (round 83, r83mcpkill).

A process killed (``os._exit``) the moment it would write the working tree, its commit on the
branch: ``.git/index.lock`` stays held, so a person's ``git add``/``git commit`` fails loudly
instead of committing the older index (which took the commit back under their name); the next
writer, or :func:`sharedwrite.recover`, finishes the writes and removes the lock.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from controller.git import sharedwrite
from controller.git.gitrepo import GitRepo
from controller.git.records import Person
from tests.support.gitenv import git

AGENT = Person("Agent", "agent@example.com")


def _killed_commit(repo: Path, path: str, data: bytes) -> str:
    """Commit ``path`` through the writer in a child killed before its tree write."""
    head = git(repo, "rev-parse", "HEAD").strip()
    pid = os.fork()
    if pid == 0:  # the writer, killed in its window
        try:
            writer = GitRepo(repo)
            writer.write_worktree = lambda *_: os._exit(9)  # type: ignore[method-assign]
            sharedwrite.commit_checked_out(
                writer, branch="main", parent=head, files={path: data}, message="submit",
                author=AGENT,
            )  # fmt: skip
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 9
    assert git(repo, "rev-parse", "HEAD").strip() != head  # the commit landed
    return head


def test_a_killed_writer_holds_the_lock_and_a_person_commit_fails(repo: Path) -> None:
    _killed_commit(repo, "plans/s/PLAN.yml", b"plan: s\n")
    assert (repo / ".git" / "index.lock").exists()
    assert "D  plans/s/PLAN.yml" in git(repo, "status", "--porcelain")  # the index behind
    (repo / "notes.txt").write_text("mine\n")
    refused = subprocess.run(
        ["git", "add", "notes.txt"], cwd=repo, capture_output=True, text=True, check=False
    )
    assert refused.returncode != 0 and "index.lock" in refused.stderr
    assert sharedwrite.recover(GitRepo(repo)) is True  # the next start: its lock removed
    assert not (repo / ".git" / "index.lock").exists()
    assert not (repo / ".git" / sharedwrite.NOTE).exists()
    assert (repo / "plans/s/PLAN.yml").read_bytes() == b"plan: s\n"
    assert git(repo, "status", "--porcelain") == "?? notes.txt\n"  # index = HEAD = tree
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "mine")
    assert git(repo, "diff", "--name-status", "HEAD~1", "HEAD") == "A\tnotes.txt\n"


def test_the_next_writer_finishes_a_killed_ones_writes_first(repo: Path) -> None:
    _killed_commit(repo, "plans/s/PLAN.yml", b"plan: s\n")
    writer = GitRepo(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    sha = sharedwrite.commit_checked_out(
        writer, branch="main", parent=head, files={"plans/t/PLAN.yml": b"plan: t\n"},
        message="submit t", author=AGENT,
    )  # fmt: skip
    assert sha is not None
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "index.lock").exists()
    assert git(repo, "ls-files", "plans") == "plans/s/PLAN.yml\nplans/t/PLAN.yml\n"


def test_a_writer_still_writing_is_never_recovered(repo: Path) -> None:
    """A note while the writer's ``flock`` is held is a live writer's: left alone."""
    import fcntl

    _killed_commit(repo, "plans/s/PLAN.yml", b"plan: s\n")
    flock = repo / ".git" / (sharedwrite.NOTE + ".flock")
    fd = os.open(flock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        pid = os.fork()
        if pid == 0:  # another process: flock is per open file
            os._exit(0 if sharedwrite.recover(GitRepo(repo)) is False else 1)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert (repo / ".git" / "index.lock").exists()
    finally:
        os.close(fd)
    assert sharedwrite.recover(GitRepo(repo)) is True


def test_a_writer_refused_by_a_persons_lock_leaves_no_note(repo: Path) -> None:
    """Round 109: a writer refused by a person's ``index.lock`` left its note ("about to take
    the lock"), and the next writer removed a later lock of that person's as its own."""
    import pytest

    from controller.errors import PlangateError

    head = git(repo, "rev-parse", "HEAD").strip()
    lock = repo / ".git" / "index.lock"
    lock.write_text("")  # a person's git holds it
    with pytest.raises(PlangateError):
        sharedwrite.commit_checked_out(
            GitRepo(repo), branch="main", parent=head, files={"plans/u/PLAN.yml": b"u\n"},
            message="submit u", author=AGENT,
        )  # fmt: skip
    assert git(repo, "rev-parse", "HEAD").strip() == head  # nothing landed
    assert not (repo / ".git" / sharedwrite.NOTE).exists()
    lock.unlink()
    lock.write_text("")  # the person's next lock: never taken for the writer's
    assert sharedwrite.recover(GitRepo(repo)) is False
    assert lock.exists()


def _refused_write(writer: GitRepo, before: object = None) -> None:
    """The working-tree write refused by the system (a plans folder its user cannot write,
    a full disk), after ``before`` ran (another hand moving the branch meanwhile)."""

    def refuse(*_: object) -> None:
        if callable(before):
            before()
        raise PermissionError(13, "Permission denied", str(writer.path / "plans"))

    writer.write_worktree = refuse  # type: ignore[method-assign]


def test_a_write_the_system_refuses_puts_the_branch_back(repo: Path) -> None:
    """Round 109 (mcp-submit-half-written): the commit landed, the tree write failed, and the
    index never held the commit: ``git status`` showed the submission staged as deleted and a
    person's next commit would have deleted it. Now the branch is put back, nothing is
    left to commit, and the error is coded."""
    import pytest

    from controller.errors import StorageFailed

    head = git(repo, "rev-parse", "HEAD").strip()
    writer = GitRepo(repo)
    _refused_write(writer)
    with pytest.raises(StorageFailed) as refused:
        sharedwrite.commit_checked_out(
            writer, branch="main", parent=head, files={"plans/s/PLAN.yml": b"plan: s\n"},
            message="submit", author=AGENT,
        )  # fmt: skip
    assert refused.value.code == "E_STORAGE"
    assert "nothing was committed" in str(refused.value)
    assert refused.value.path == "plans/s/PLAN.yml"
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "index.lock").exists()
    assert not (repo / ".git" / sharedwrite.NOTE).exists()


def test_a_refused_write_after_the_branch_moved_on_keeps_the_commit_indexed(repo: Path) -> None:
    """The branch moved on above the commit meanwhile (a push into the repository): putting
    it back would drop that work, so the commit stays, the index holds it (never a staged
    deletion), and the error says what to run."""
    import pytest

    from controller.errors import StorageFailed

    head = git(repo, "rev-parse", "HEAD").strip()
    writer = GitRepo(repo)

    def push_on_top() -> None:
        mine = git(repo, "rev-parse", "main").strip()
        tree = git(repo, "rev-parse", f"{mine}^{{tree}}").strip()
        above = git(repo, "commit-tree", tree, "-p", mine, "-m", "pushed").strip()
        git(repo, "update-ref", "refs/heads/main", above, mine)

    _refused_write(writer, push_on_top)
    with pytest.raises(StorageFailed) as refused:
        sharedwrite.commit_checked_out(
            writer, branch="main", parent=head, files={"plans/s/PLAN.yml": b"plan: s\n"},
            message="submit", author=AGENT,
        )  # fmt: skip
    assert "git restore -- plans/s/PLAN.yml" in (refused.value.remedy or "")
    assert git(repo, "show", "main:plans/s/PLAN.yml") == "plan: s\n"
    assert git(repo, "status", "--porcelain") == " D plans/s/PLAN.yml\n"  # unstaged only
    assert not (repo / ".git" / "index.lock").exists()
    git(repo, "restore", "--", "plans/s/PLAN.yml")
    assert git(repo, "status", "--porcelain") == ""


def test_approve_into_a_folder_it_cannot_write_commits_nothing(tmp_path: Path) -> None:
    """End to end: ``plangate approve`` run by a user who cannot write the plan's folder
    (as root: without CAP_DAC_OVERRIDE) is ``E_STORAGE``, and the branch, the index and the
    tree are as they were."""
    import shutil
    import sys

    import pytest

    from tests.support.gitenv import commit_all

    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    folder = repo / "plans" / "one"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(
        "plan:\n  name: one\n  task: t\n  status: pending_approval\navailable_tools:\n"
        "  - name: greet\nactions:\n  - id: 1\n    tool: greet\n    why: w\n    params: {}\n"
    )
    subprocess.run(
        [sys.executable, "-m", "controller", "freeze", "plans/one"], cwd=repo, check=True,
        capture_output=True,
    )  # fmt: skip
    commit_all(repo, "propose", ("Agent", "agent@example.com"))
    head = git(repo, "rev-parse", "HEAD").strip()
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv: every folder is writable")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    folder.chmod(0o555)
    try:
        env = dict(os.environ, GIT_AUTHOR_NAME="Alice", GIT_AUTHOR_EMAIL="alice@example.com")
        env.update(GIT_COMMITTER_NAME="Alice", GIT_COMMITTER_EMAIL="alice@example.com")
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "controller", "approve", "plans/one"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        folder.chmod(0o755)
    assert done.returncode != 0
    assert "E_STORAGE" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "nothing was committed" in done.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert git(repo, "status", "--porcelain") == ""
