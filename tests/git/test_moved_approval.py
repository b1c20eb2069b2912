"""A move that keeps a plan file's bytes writes nothing (docs/approvals.md, moves): when the
file it moves says ``approved`` and its source held that approval open, the move carries it,
request and all (its commit, author and kind), as it carries any other status its source had
(round 72, ``Lifecycle._moved_state``). So a pass's timing never changes a verdict: the
history index reads the same commits in the same order whether a pass ran between them or
not (round 77, r77movedappr).

Seen before the fix: tests/adversarial/test_round77_approve_swapstates.py (``appr-swapx``,
``appr-mv``): Alice approved the agent's plan, then the agent swapped its file with another
plan's byte for byte, or ``git mv``-ed its folder, in the very next commit, before any pass:
the index read "approval request (approve) by agent@example.com" at the new path
(``E_APPROVER_NOT_ALLOWED``), and the version she approved never ran; with a pass between
the two commits it ran on her approval."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.approval.audit import audit_repo
from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from tests.support.gitenv import identity
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    approve,
    commit_all,
    edit_status,
    git,
    make_config,
    run_once,
    write_plan,
)
from tests.support.plantext import greet_plan

OTHER = greet_plan("Other", "Say hello to the team", "team")


def _plans(repo: Path) -> None:
    """``plans/greet`` and ``plans/other``, the agent's, frozen by the controller."""
    write_plan(repo, "greet")
    write_plan(repo, "other", OTHER)
    commit_all(repo, "agent: two plans", AGENT)
    run_once(repo)


def _swap(repo: Path) -> str:
    one, two = repo / "plans/greet/PLAN.yml", repo / "plans/other/PLAN.yml"
    a, b = one.read_bytes(), two.read_bytes()
    one.write_bytes(b)
    two.write_bytes(a)
    commit_all(repo, "agent: swap greet and other", AGENT)
    return "plans/other"


def _mv(repo: Path) -> str:
    git(repo, "mv", "plans/greet", "plans/moved")
    commit_all(repo, "agent: move greet", AGENT)
    return "plans/moved"


def _edited_mv(repo: Path) -> str:
    git(repo, "mv", "plans/greet", "plans/moved")
    path = repo / "plans/moved/PLAN.yml"
    path.write_text(path.read_text().replace("Say hello to the world", "Say hello, moved"))
    commit_all(repo, "agent: move greet, edited", AGENT)
    return "plans/moved"


MOVES: dict[str, Callable[[Path], str]] = {"swap": _swap, "mv": _mv}


def _index_rows(repo: Path, heads: list[str]) -> dict[str, tuple[Any, ...]]:
    """Each plan's status and open request after scanning up to each of ``heads`` in turn
    (one scan: the last head alone; a scan per commit: every one)."""
    index = HistoryIndex(None, plans_dir="plans", controller_email="plangate@localhost")
    try:
        for head in heads:
            index.scan(GitRepo(repo), head)
        return {
            plan: (
                state.status,
                state.file,
                (state.request or {}).get("commit"),
                (state.request or {}).get("author"),
                (state.request or {}).get("kind"),
                (state.request or {}).get("voided_by"),
            )
            for plan, state in index.plans.items()
        }
    finally:
        index.close()


def _commits_since(repo: Path, since: str) -> list[str]:
    return git(repo, "rev-list", "--reverse", f"{since}..HEAD").split()


def _runs(repo: Path) -> list[tuple[str | None, str | None, bool]]:
    """The audit's runs, as (hash, approver, valid), in order."""
    head = git(repo, "rev-parse", "HEAD").strip()
    report = audit_repo(GitRepo(repo), make_config(repo), head)
    return [(e.plan_hash, e.approver, e.approval_valid) for e in report.executions]


def _started(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s", "--grep=^plangate: start").split("\n")[:-1] or []


@pytest.mark.parametrize("how", sorted(MOVES))
def test_a_byte_exact_move_carries_the_approval_its_source_held_open(repo: Path, how: str) -> None:
    _plans(repo)
    frozen = git(repo, "rev-parse", "HEAD").strip()
    approval = approve(repo, "greet", ALICE)
    target = MOVES[how](repo)
    heads = _commits_since(repo, frozen)
    once = _index_rows(repo, [heads[-1]])
    each = _index_rows(repo, heads)
    assert once == each
    status, file, commit, author, kind, voided = once[target]
    assert (status, file) == ("approved", f"{target}/PLAN.yml"), once
    assert (commit, author, kind, voided) == (approval, ALICE[1], "approve", None), once


@pytest.mark.parametrize("how", sorted(MOVES))
def test_the_approved_version_runs_once_on_her_approval_whatever_the_passes(
    repo: Path, tmp_path: Path, how: str
) -> None:
    """The same history with one pass after the move, and with a pass between her approval
    and the move: the same version runs once, on her approval, and the audit agrees."""
    twin = tmp_path / "twin"
    twin.mkdir()
    git(twin, "init", "-q", "-b", "main")
    rows = []
    for here, between in ((repo, False), (twin, True)):
        _plans(here)
        approve(here, "greet", ALICE)
        if between:
            run_once(here)
        MOVES[how](here)
        run_once(here)
        run_once(here)
        runs = _runs(here)
        assert len(_started(here)) == 1, _started(here)
        assert [(a, ok) for _h, a, ok in runs] == [(ALICE[1], True)], runs
        rows.append(runs)
    assert rows[0] == rows[1]


def test_an_edited_move_carries_no_approval(repo: Path) -> None:
    """Any byte changed is another version, the mover's writing (rounds 75-76): the file
    still saying ``approved`` is the mover's approval of content it wrote, never hers (a
    control: the rule's edge, held before the fix too)."""
    _plans(repo)
    frozen = git(repo, "rev-parse", "HEAD").strip()
    approve(repo, "greet", ALICE)
    target = _edited_mv(repo)
    rows = _index_rows(repo, _commits_since(repo, frozen))
    assert rows[target][3] == AGENT[1], rows
    run_once(repo)
    assert _started(repo) == []


def test_an_approval_made_with_the_move_stays_the_movers(repo: Path) -> None:
    """The move's commit that sets ``approved`` itself approves (round 70): Bob's move of the
    agent's pending plan, approved in the same commit, is his approval, not an older one (a
    control, held before the fix too)."""
    _plans(repo)
    frozen = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "mv", "plans/greet", "plans/moved")
    edit_status(repo, "moved", "approved")
    move = commit_all(repo, "bob: move and approve greet", BOB)
    rows = _index_rows(repo, _commits_since(repo, frozen))
    assert rows["plans/moved"][2:5] == (move, BOB[1], "approve"), rows


def test_a_lapsed_approval_is_not_carried(repo: Path) -> None:
    """Her approval taken back before the move (the file back to ``pending_approval``, then
    ``approved`` again by the agent) is no approval of hers to carry."""
    _plans(repo)
    frozen = git(repo, "rev-parse", "HEAD").strip()
    approve(repo, "greet", ALICE)
    edit_status(repo, "greet", "pending_approval")
    commit_all(repo, "agent: back to pending", AGENT)
    mine = approve(repo, "greet", AGENT)
    target = _mv(repo)
    rows = _index_rows(repo, _commits_since(repo, frozen))
    assert rows[target][2:4] == (mine, AGENT[1]), rows
    run_once(repo)
    assert _started(repo) == []


@pytest.mark.parametrize("fork", ["after", "before"])
def test_a_branch_moving_her_approved_plan_merged_carries_her_approval(
    repo: Path, fork: str
) -> None:
    """The agent moves the plan byte for byte on a branch and merges it ``--no-ff``: made
    after her approval, the branch holds her approved bytes; made before it, git merges the
    branch's rename with her status change. Either way the merge brings the very bytes she
    approved to the new path, her approval with them."""
    _plans(repo)
    if fork == "before":
        git(repo, "branch", "side")
    approval = approve(repo, "greet", ALICE)
    if fork == "after":
        git(repo, "branch", "side")
    git(repo, "checkout", "-q", "side")
    _mv(repo)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "agent: merge side", "side", env=identity(*AGENT))
    assert git(repo, "ls-files", "plans").split() == [
        "plans/moved/PLAN.yml",
        "plans/other/PLAN.yml",
    ]
    rows = _index_rows(repo, [git(repo, "rev-parse", "HEAD").strip()])
    assert rows["plans/moved"][:4] == ("approved", "plans/moved/PLAN.yml", approval, ALICE[1]), rows
    run_once(repo)
    assert _started(repo) == ["plangate: start plans/moved"]
