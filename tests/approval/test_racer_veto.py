"""A producer's withdrawal binds the plans that are hers, not an independent making of the same
bytes (round 124, atk124a, ``racer-veto-before-merge``).

Dave's pull request adds ``plans/greet`` (pending). Before Bob merges it, Mallory (no
approver) commits the same bytes at ``plans/greet-m`` and sets HER copy ``rejected``. At that
moment she was the version's only producer, so her withdrawal was kept by the version's hash
and bound every plan holding it: after the merge, Bob's approval of Dave's plan was refused
``E_VERSION_WITHDRAWN``. Now a producer's withdrawal binds a plan only where she may withdraw
that plan as its author (``Lifecycle.withdrawers``: the originators at its folder, else
everywhere), as SPEC §4 already rules for a rejection of the plan itself. Rounds 16 and 23
still hold: her own re-add or copy of her rejected plan, and anyone's copy of her content,
stay withdrawn; an allowed approver's rejection binds every plan holding the version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.service.reconcile import Controller
from controller.settings import config_from_data
from tests.approval.test_raced_withdrawals import (
    BOB,
    DAVE,
    MALLORY,
    _audit,
    _commit,
    _data,
    _git,
    _row,
    _starts,
)
from tests.support.gitenv import run_cli
from tests.support.gitkit import PLAN, approve, edit_status, subjects, write_plan

ALICE = ("Alice", "alice@example.com")


def _controller(repo: Path) -> Controller:
    return Controller(config_from_data(_data(repo), repo.parent / "plangate.yml"))


def _reject(repo: Path, who: tuple[str, str], slug: str) -> None:
    edit_status(repo, slug, "rejected")
    _commit(repo, f"reject {slug}", who)


def _said(row: dict[str, Any]) -> str:
    return " ".join(map(str, [row.get("reason"), *(row.get("notes") or [])]))


def _check(repo: Path, head: str) -> dict[str, Any]:
    """``plangate check --as bob`` of the branch ``head`` against main: its plans by id."""
    config = repo.parent / "plangate.yml"
    config.write_text(json.dumps(_data(repo)))
    told = run_cli(
        "check", "--config", str(config), "--base", "main", "--head", head,
        "--as", BOB[1], "--format", "json", cwd=repo,
    )  # fmt: skip
    return {p["plan"]: p for p in json.loads(told.stdout)["plans"]}


def _raced_and_vetoed(repo: Path, who: tuple[str, str], how: str) -> None:
    """Dave's pull request adds ``plans/greet``; ``who`` lands its bytes at ``plans/greet-m``
    and sets that copy ``rejected`` (``how``: on main, or on a branch merged before the
    pull request) before Bob merges the pull request; one pass."""
    _git(repo, "checkout", "-q", "-b", "pr")
    write_plan(repo)
    _commit(repo, "dave: greet", DAVE)
    _git(repo, "checkout", "-q", "main")
    if how == "branch":
        _git(repo, "checkout", "-q", "-b", "mine")
    write_plan(repo, "greet-m")
    _commit(repo, "the same bytes first", who)
    _reject(repo, who, "greet-m")
    if how == "branch":
        _git(repo, "checkout", "-q", "main")
        _git(repo, "merge", "-q", "--no-ff", "-m", "merge mine", "mine", who=BOB)
    _git(repo, "merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=BOB)


@pytest.mark.parametrize("how", ["line", "branch"])
def test_a_racers_rejection_of_her_copy_does_not_veto_the_authors_plan(
    repo: Path, how: str
) -> None:
    """Mallory's rejection withdraws her copy only: Dave's plan shows no withdrawal while it
    waits, ``check`` predicts Bob's approval starts it, Bob's approval runs it once, and the
    fresh-clone audit calls the run valid and flags nothing."""
    _raced_and_vetoed(repo, MALLORY, how)
    row = _row(repo)
    assert row.get("status") == "pending_approval", row
    assert "E_VERSION_WITHDRAWN" not in _said(row), row
    assert _row(repo, "greet-m").get("status") == "rejected"
    _git(repo, "checkout", "-q", "-b", "review")
    approve(repo, who=BOB)
    _git(repo, "checkout", "-q", "main")
    assert _check(repo, "review")["plans/greet"].get("outcome") == "start"
    _git(repo, "merge", "-q", "--ff-only", "review", who=BOB)
    _row(repo)
    row = _row(repo)
    assert row.get("status") == "completed", row
    assert len(_starts(repo)) == 1, subjects(repo)
    runs = [e for e in _audit(repo).get("executions", []) if e.get("plan") == "plans/greet"]
    assert [e.get("approval_valid") for e in runs] == [True], runs


def test_an_approvers_rejection_of_the_racing_copy_still_vetoes_the_version(repo: Path) -> None:
    """Alice (an allowed approver) rejects the same copy before the merge: the version is
    withdrawn everywhere; Dave's plan says so while it waits and Bob's approval runs nothing."""
    _raced_and_vetoed(repo, ALICE, "line")
    row = _row(repo)
    assert "E_VERSION_WITHDRAWN" in _said(row), row
    approve(repo, who=BOB)
    _row(repo)
    row = _row(repo)
    assert "E_VERSION_WITHDRAWN" in _said(row), row
    assert not _starts(repo), subjects(repo)


@pytest.mark.parametrize("who", [MALLORY, DAVE], ids=["her-own", "anyone-elses"])
def test_a_copy_of_a_producers_rejected_plan_stays_withdrawn(
    repo: Path, who: tuple[str, str]
) -> None:
    """Rounds 16 and 23 kept: Mallory writes and rejects ``plans/m``; a copy of it at
    ``plans/greet`` (hers, or Dave's copy of her content) is withdrawn: its authors are hers,
    its row says ``E_VERSION_WITHDRAWN`` and Bob's approval runs nothing."""
    write_plan(repo, "m")
    _commit(repo, "mallory: m", MALLORY)
    _row(repo, "m")
    _reject(repo, MALLORY, "m")
    write_plan(repo)
    _commit(repo, "a copy of m", who)
    row = _row(repo)
    assert "E_VERSION_WITHDRAWN" in _said(row), row
    approve(repo, who=BOB)
    _row(repo)
    _row(repo)
    assert not _starts(repo), subjects(repo)


def test_her_re_add_at_her_own_folder_stays_withdrawn(repo: Path) -> None:
    """Mallory rejects her plan, deletes it and adds the same bytes again: still hers,
    still withdrawn."""
    write_plan(repo)
    _commit(repo, "mallory: greet", MALLORY)
    _row(repo)
    _reject(repo, MALLORY, "greet")
    _git(repo, "rm", "-q", "-r", "plans/greet")
    _commit(repo, "gone", MALLORY)
    _row(repo)
    write_plan(repo, text=PLAN)
    _commit(repo, "mallory: greet again", MALLORY)
    approve(repo, who=BOB)
    _row(repo)
    _row(repo)
    assert not _starts(repo), subjects(repo)


def test_submit_asks_the_same_rule(repo: Path) -> None:
    """What MCP ``submit`` asks before it commits (``Controller.withdrawal``): a new plan of
    the raced version at Dave's folder or elsewhere is not withdrawn by Mallory's rejection
    (the race left her no author of it); the version Mallory alone made and rejected is
    withdrawn under any name."""
    _raced_and_vetoed(repo, MALLORY, "line")
    write_plan(repo, "solo", PLAN.replace("Greet", "Solo"))
    _commit(repo, "mallory: solo", MALLORY)
    _row(repo, "solo")
    _reject(repo, MALLORY, "solo")
    _row(repo, "solo")
    ctl = _controller(repo)
    try:
        rows = {str(r["plan"]): r for r in ctl.status()}
        raced, solo = rows["plans/greet"]["hash"], rows["plans/solo"]["hash"]
        assert ctl.withdrawal(raced, "plans/greet") is None
        assert ctl.withdrawal(raced, "plans/other") is None
        found = ctl.withdrawal(solo, "plans/other")
        assert found is not None and found.get("by") == MALLORY[1], found
    finally:
        ctl.close()
