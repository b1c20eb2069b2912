"""The controller indexes its own commits at the date each commit carries.

It applies its own commit to its history index without asking git what it wrote
(``Committing._index_own_commit``). It used to date that record by the clock at indexing
time, a moment after the commit was dated: across a second's boundary (a loaded machine) a
freeze was indexed one second younger than git holds it, and a quorum completed 7 s after
the freeze passed ``max_age: 6s`` (``test_round23_approve_quorumage.py[late-second]``
failed about one run in six under load), while a fresh clone's audit read the true date.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.gitkit import AGENT, approve, commit_all, controller, git, head_plan, write_plan


def test_a_freeze_is_indexed_at_its_commits_date_not_at_the_clock(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A freeze commit dated an hour before the pass that indexes it (git's dates forced
    through the environment, the way a stalled controller's commit is older than the moment
    it is indexed): ``max_age: 10m`` counts from the commit's date, as the audit does."""
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    an_hour_ago = int(time.time()) - 3600
    with controller(repo, max_age="10m") as ctl:
        monkeypatch.setenv("GIT_AUTHOR_DATE", f"@{an_hour_ago} +0000")
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"@{an_hour_ago} +0000")
        ctl.run_once()  # freezes
        monkeypatch.delenv("GIT_AUTHOR_DATE")
        monkeypatch.delenv("GIT_COMMITTER_DATE")
        assert git(repo, "log", "-1", "--format=%ct %s").split(" ", 1) == [
            str(an_hour_ago),
            "plangate: freeze plans/greet\n",
        ]
        approve(repo)
        ctl.run_once()
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "pending_approval" and "execution" not in plan
    assert "E_PLAN_EXPIRED" in git(repo, "log", "-1", "--format=%B")
