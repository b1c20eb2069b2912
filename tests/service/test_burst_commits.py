"""A burst's commits: a worker never waits for a pass, outcomes share the pass's commit, and
a batched commit's job rows and executed records are written together (issue 17)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from controller.service.core import Job
from tests.support.gitkit import (
    AGENT,
    ALICE,
    PLAN,
    commit_all,
    controller,
    edit_status,
    git,
    head_plan,
    write_plan,
)


def _add_plans(repo: Path, slugs: list[str]) -> None:
    for slug in slugs:  # distinct plans: copies of one would not run again
        write_plan(repo, slug, PLAN.replace("to the world", f"to {slug}"))
    commit_all(repo, "add plans", AGENT)


def test_a_worker_leaves_its_outcome_to_a_pass_holding_the_controller(repo: Path) -> None:
    slugs = ["p0", "p1"]
    _add_plans(repo, slugs)
    with controller(repo) as ctl:
        ctl.reconcile()  # freezes them
        for slug in slugs:
            edit_status(repo, slug, "approved")
        commit_all(repo, "approve both", ALICE)
        queued: list[Job] = []
        ctl.reconcile(dispatch=queued.append)
        assert sorted(j.plan_id for j in queued) == ["plans/p0", "plans/p1"]
        started = git(repo, "rev-parse", "HEAD").strip()

        held, release = threading.Event(), threading.Event()

        def long_pass() -> None:  # holds the controller as a pass deciding 1,000 plans does
            with ctl._lock:
                held.set()
                release.wait(60)

        holder = threading.Thread(target=long_pass)
        holder.start()
        held.wait(10)
        try:
            workers = [threading.Thread(target=ctl.execute, args=(job,)) for job in queued]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join(30)
            # free for their next plans at once, while the pass still holds the controller
            assert not any(worker.is_alive() for worker in workers)
            assert git(repo, "rev-parse", "HEAD").strip() == started  # nothing committed yet
            assert ctl.running() == {"plans/p0", "plans/p1"}  # running until committed
        finally:
            release.set()
            holder.join(30)
        ctl.reconcile()  # the pass commits the outcomes waiting, together
        assert ctl.running() == set()
        assert ctl.index.jobs() == {}
    changed = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split()
    assert {"plans/p0/PLAN.yml", "plans/p1/PLAN.yml"} <= set(changed)
    assert git(repo, "rev-parse", "HEAD~1").strip() == started  # one commit for both
    for slug in slugs:
        assert head_plan(repo, slug)["plan"]["status"] == "completed"


def test_a_batched_start_records_every_job_and_executed_hash(repo: Path) -> None:
    slugs = [f"b{i}" for i in range(10)]  # more than a pass commits one by one
    _add_plans(repo, slugs)
    with controller(repo) as ctl:
        ctl.reconcile()
        for slug in slugs:
            edit_status(repo, slug, "approved")
        commit_all(repo, "approve all", ALICE)
        queued: list[Job] = []
        ctl.reconcile(dispatch=queued.append)
        assert len(queued) == len(slugs)
        jobs = dict(ctl.index.jobs())
        executed = ctl.state.executed()
    # what a restart reads: every job row and every executed hash is on disk
    with controller(repo) as again:
        assert again.index.jobs() == jobs
        assert sorted(jobs) == [f"plans/{s}" for s in slugs]
        assert again.state.executed() == executed
        assert sorted(row["plan"] for row in executed.values()) == sorted(jobs)


def test_a_batched_note_is_redacted_around_its_own_plans_quotes(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 66: a batch's ``Plan-Note`` went through the redactor whole, unlike the commit of
    one outcome (``PlangateError.recorded``): a failing check's expected value equal to a
    secret was ``***`` for the right guess only. Each note keeps its own plan's quotes; a
    plan that quotes nothing (a tool's error) stays redacted."""
    from controller.service.committing import _Entry

    monkeypatch.setenv("PLANGATE_SECRET_TOKEN", "r66-s3cr3t-kq7")
    body = 'verify failed (expected equals "r66-s3cr3t-kq7")'
    entries = [
        _Entry(f"plans/{slug}", {}, "", [], "fail", body, None, None, None, None, None)
        for slug in ("own", "tool")
    ]
    entries[0].quotes = ("r66-s3cr3t-kq7",)
    with controller(repo) as ctl:
        message = ctl._batch_message(entries)
    notes = [line for line in message.splitlines() if line.startswith("Plan-Note:")]
    assert notes == [
        'Plan-Note: verify failed (expected equals "r66-s3cr3t-kq7")',
        'Plan-Note: verify failed (expected equals "***")',
    ]
