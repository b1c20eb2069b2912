"""A pass costs what changed: plans queued for a worker (a burst's thousand executing plans)
are not looked at again by every later pass."""

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
    write_plan,
)


def test_queued_executing_plans_cost_a_later_pass_nothing(repo: Path) -> None:
    slugs = [f"p{i:02d}" for i in range(12)]
    for slug in slugs:  # distinct plans: copies of one would not run again
        write_plan(repo, slug, PLAN.replace("to the world", f"to {slug}"))
    commit_all(repo, "add plans", AGENT)
    with controller(repo) as ctl:
        ctl.reconcile()  # freezes them
        for slug in slugs:
            edit_status(repo, slug, "approved")
        commit_all(repo, "approve all", ALICE)
        queued: list[Job] = []
        jobs = ctl.reconcile(dispatch=queued.append)  # started, handed to (idle) workers
        assert sorted(j.plan_id for j in [*queued, *jobs]) == [f"plans/{s}" for s in slugs]
        looked_at: list[str] = []
        act = ctl._act

        def counting(state):  # type: ignore[no-untyped-def]
            looked_at.append(state.plan_id)
            return act(state)

        ctl._act = counting  # type: ignore[method-assign]
        ctl.reconcile(dispatch=queued.append)  # nothing changed since
        assert looked_at == []
        write_plan(repo, "new", PLAN.replace("to the world", "to someone new"))
        commit_all(repo, "add one more", AGENT)
        ctl.reconcile(dispatch=queued.append)
        assert looked_at == ["plans/new"]  # what changed, and only that
