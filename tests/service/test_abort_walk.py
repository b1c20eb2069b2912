"""The abort check's walk over the controller's own commits (issue 17, perf98): a commit this
process made is walked by the parent it was written on, not read again through git per
action; the answer is the one reading every commit gives."""

from __future__ import annotations

from pathlib import Path

from controller.service.core import Job
from tests.support.gitkit import (
    AGENT,
    ALICE,
    PLAN,
    commit_all,
    controller,
    edit_status,
    git,
    write_plan,
)


def test_own_commits_are_walked_without_reading_them_and_the_answer_is_the_same(
    repo: Path,
) -> None:
    for slug in ("a", "b", "c"):
        write_plan(repo, slug, PLAN.replace("to the world", f"to {slug}"))
    commit_all(repo, "add plans", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()  # freezes them
        for slug in ("a", "b", "c"):
            edit_status(repo, slug, "approved")
        commit_all(repo, "approve all", ALICE)
        since = git(repo, "rev-parse", "HEAD").strip()
        queued: list[Job] = []
        ctl.reconcile(dispatch=queued.append)  # the controller's start commits
        head = git(repo, "rev-parse", "HEAD").strip()
        assert head != since and queued
        read: list[str] = []
        blob = ctl.repo.blob

        def counting(sha: str) -> bytes:
            read.append(sha)
            return blob(sha)

        ctl.repo.blob = counting  # type: ignore[method-assign]
        assert ctl._ours_since(since, head)
        assert read == []  # made by this process: walked by the parent it was written on
        made = dict(ctl._made)
        ctl._made.clear()  # as a process that did not make them (a restart) reads them
        assert ctl._ours_since(since, head)
        assert read and set(read) <= set(made)
        ctl._made.update(made)
        write_plan(repo, "d", PLAN.replace("to the world", "to d"))
        other = commit_all(repo, "someone else's commit", AGENT)
        assert not ctl._ours_since(since, git(repo, "rev-parse", "HEAD").strip())
        assert other not in ctl._made
