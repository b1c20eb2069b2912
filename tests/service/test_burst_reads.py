"""A burst's objects are read from git once (issue 17, perf99): a plan's approved PLAN.yml
was asked of the persistent ``cat-file`` five times by its decision and start (the request
twice, the approved text, the start's and the pass's uncommitted checks) and its folder's
tree twice; an object read is kept by its id, as one read in a batch is. A kept object is
taken for a commit only when it hashes to that commit's id."""

from __future__ import annotations

from collections import Counter
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

SLUGS = ("a", "b", "c", "d")


def test_an_approving_pass_reads_no_object_twice_and_starts_every_plan(repo: Path) -> None:
    for slug in SLUGS:
        write_plan(repo, slug, PLAN.replace("to the world", f"to {slug}"))
    commit_all(repo, "add plans", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()  # freezes them
        for slug in SLUGS:
            edit_status(repo, slug, "approved")
        commit_all(repo, "approve all", ALICE)
        approved = {
            slug: git(repo, "rev-parse", f"HEAD:plans/{slug}/PLAN.yml").strip() for slug in SLUGS
        }
        read: Counter[str] = Counter()
        typed = ctl.repo._typed_object

        def counting(sha: str, limit: int | None = None) -> tuple[bytes, bytes]:
            read[sha] += 1
            return typed(sha, limit)

        ctl.repo._typed_object = counting  # type: ignore[method-assign]
        queued: list[Job] = []
        ctl.reconcile(dispatch=queued.append)  # decisions and start commits
        assert sorted(job.plan_id for job in queued) == [f"plans/{s}" for s in SLUGS]
        twice = {sha: n for sha, n in read.items() if n > 1}
        assert twice == {}, twice
        for blob in approved.values():  # each approved version read at most once
            assert read[blob] <= 1


def test_a_kept_object_is_a_commit_only_when_it_hashes_to_the_commit(repo: Path) -> None:
    write_plan(repo, "a", PLAN)
    commit_all(repo, "add a plan", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()  # the controller's freeze commit: in its store
        head = git(repo, "rev-parse", "HEAD").strip()
        real = ctl.repo._typed_object(head)
        assert real[0] == b"commit"
        # other bytes under a commit's id (a blob's, whose text may start as a commit's)
        ctl.repo._kept[head] = b"tree " + b"0" * 40 + b"\n\nforged\n"
        assert ctl.repo._typed_commit(head) == real
        ctl.repo._kept[head] = real[1]
        assert ctl.repo._typed_commit(head) == real
