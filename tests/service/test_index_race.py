"""A person's `git commit` in the moment between the controller moving the branch and
pointing the index at its commit (local mode).

git builds a commit's tree from the index. Before this was fixed, a person's `git add` and
`git commit` in that moment (a few ms; longer under load) made a commit on top of the
controller's, built from the index's older entries: it silently took the controller's
change back, and the index the controller then wrote disagreed with the branch for good
(the demo's CI failure of 2026-11-29: "gave up waiting for the daemon to freeze it"). The
controller now holds ``index.lock`` from before the branch moves until the index holds its
commit: the person's git fails on the lock, as git's own commands do beside each other, and
the same command run again keeps both changes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from tests.support.gitenv import identity
from tests.support.gitkit import AGENT, approve, controller, git, head_plan, submitted


def _human_commit(repo: Path) -> subprocess.CompletedProcess[str]:
    """The agent's note, added and committed the ordinary way (the whole index)."""
    (repo / "notes.txt").write_text("the agent's own note\n")
    env = {**os.environ, **identity(*AGENT)}
    for args in (["add", "notes.txt"], ["commit", "-q", "-m", "the agent's note"]):
        done = subprocess.run(
            ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            break
    return done


def test_a_commit_in_the_window_never_takes_the_controllers_change_back(repo: Path) -> None:
    submitted(repo)
    approve(repo)
    raced: list[subprocess.CompletedProcess[str]] = []
    with controller(repo) as ctl:
        write = ctl.repo.write_worktree

        def write_after_a_human(files: dict[str, bytes | None], **how: Any) -> None:
            if not raced:  # the branch has the controller's commit; its index does not yet
                raced.append(_human_commit(repo))
            write(files, **how)

        ctl.repo.write_worktree = write_after_a_human  # type: ignore[method-assign]
        ctl.run_once()
    assert raced, "the controller never wrote the working tree"
    assert raced[0].returncode != 0 and "index.lock" in raced[0].stderr, raced[0]
    assert head_plan(repo)["plan"]["status"] == "completed"
    # the index agrees with the branch: nothing staged or modified but the agent's new file
    assert git(repo, "status", "--porcelain") == "?? notes.txt\n"
    # run again, as git tells the person to: both changes are kept
    again = _human_commit(repo)
    assert again.returncode == 0, again.stderr
    assert git(repo, "diff", "--name-only", "HEAD~1", "HEAD") == "notes.txt\n"
    assert head_plan(repo)["plan"]["status"] == "completed"
    assert git(repo, "status", "--porcelain") == ""
    # no commit of the agent's changed anything of the controller's
    for sha in git(repo, "log", "--format=%H", "--author=agent@example.com").split():
        changed = git(repo, "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", sha)
        assert "EXECUTION_LOG.md" not in changed, (sha, changed)
