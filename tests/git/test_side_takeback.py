"""A take-back or a withdrawal made on a merged branch counts however the branch ends
(docs/approvals.md, moves and merged branches): "A merge carries a lapse its merged branch
made", "a move on a merged branch is a move as on the line", and "an approval lapsed or
voided before the move is none to carry". So a branch that takes her approval back (or
withdraws the version), then writes her ``approved`` bytes back (moved byte-exact, or in
place), merged ``--no-ff``, carries nothing of hers: the merge's net diff (nothing, or a
byte-exact move) does not hide the branch's own status changes (round 79, r79sidelapse).

Seen before the fix: tests/adversarial/test_round79_approve_carried.py (``prreset``,
``prwd``, ``pralice``, ``prbob``, ``prsame``, ``pralicesame``): the version ran once on
Alice's approval taken back on the branch; only Bob's reject with the bytes back in place
(``prbobsame``) was seen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from tests.git.test_moved_approval import _commits_since, _index_rows, _plans, _runs, _started
from tests.support.gitenv import identity
from tests.support.gitkit import AGENT, ALICE, BOB, approve, commit_all, edit_status, git, run_once

#: how the branch takes her approval back: (who, the status set)
TAKE_BACKS: dict[str, tuple[tuple[str, str], str]] = {
    "agent-reset": (AGENT, "pending_approval"),
    "alice-reset": (ALICE, "pending_approval"),
    "author-reject": (AGENT, "rejected"),
    "bob-reject": (BOB, "rejected"),
    "agent-edit": (AGENT, "approved"),  # its content changed, still saying approved: voided
}


def _mv_back(repo: Path, approved: bytes) -> str:
    git(repo, "mv", "plans/greet", "plans/moved")
    (repo / "plans/moved/PLAN.yml").write_bytes(approved)
    commit_all(repo, "agent: move greet, approved bytes back", AGENT)
    return "plans/moved"


def _same_back(repo: Path, approved: bytes) -> str:
    (repo / "plans/greet/PLAN.yml").write_bytes(approved)
    commit_all(repo, "agent: greet approved again, her bytes back", AGENT)
    return "plans/greet"


ENDS: dict[str, Callable[[Path, bytes], str]] = {"mv": _mv_back, "same": _same_back}


def _branch_takes_back(repo: Path, take_back: str, end: str) -> str:
    """Her approval on main; on the agent's branch the take-back, then its end; merged
    ``--no-ff`` by the agent. The plan's path after the merge."""
    _plans(repo)
    approve(repo, "greet", ALICE)
    approved = (repo / "plans/greet/PLAN.yml").read_bytes()
    git(repo, "checkout", "-q", "-b", "side")
    who, status = TAKE_BACKS[take_back]
    edit_status(repo, "greet", status)
    if take_back == "agent-edit":
        path = repo / "plans/greet/PLAN.yml"
        path.write_text(path.read_text().replace("Say hello to the world", "Say hello, edited"))
    commit_all(repo, f"{who[0]}: greet {status}", who)
    target = ENDS[end](repo, approved)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "agent: merge side", "side", env=identity(*AGENT))
    return target


@pytest.mark.parametrize("end", sorted(ENDS))
@pytest.mark.parametrize("take_back", sorted(TAKE_BACKS))
def test_a_branch_take_back_lapses_her_approval_however_the_branch_ends(
    repo: Path, take_back: str, end: str
) -> None:
    frozen = git(repo, "rev-parse", "HEAD").strip()
    target = _branch_takes_back(repo, take_back, end)
    heads = _commits_since(repo, frozen)
    line = git(repo, "rev-list", "--first-parent", "--reverse", f"{frozen}..HEAD").split()
    once = _index_rows(repo, [heads[-1]])
    each = _index_rows(repo, line)
    assert once == each
    _status, _file, _commit, author, _kind, voided = once[target]
    assert author != ALICE[1] or voided, once  # no request of hers stands
    run_once(repo)
    run_once(repo)
    assert _started(repo) == [], _started(repo)
    assert [a for _h, a, ok in _runs(repo) if ok] == []


@pytest.mark.parametrize("take_back", ["author-reject", "bob-reject"])
def test_a_version_withdrawn_on_a_merged_branch_stays_withdrawn_when_moved(
    repo: Path, take_back: str
) -> None:
    """The veto follows the hash (docs/approvals.md, "A withdrawn version stays withdrawn"):
    the moved file saying ``approved`` is refused ``E_VERSION_WITHDRAWN``, as on the line."""
    _branch_takes_back(repo, take_back, "mv")
    run_once(repo)
    from controller.git.history import HistoryIndex

    index = HistoryIndex(None, plans_dir="plans", controller_email="plangate@localhost")
    try:
        index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
        state = index.plans["plans/moved"]
        assert state.hash is not None and state.hash in index.withdrawn, index.withdrawn
    finally:
        index.close()


def test_a_branch_that_keeps_her_approval_carries_it(repo: Path) -> None:
    """The control: the branch's byte-exact move with no take-back before it carries her
    approval through the merge (round 77), and it runs once on her name."""
    _plans(repo)
    approval = approve(repo, "greet", ALICE)
    git(repo, "checkout", "-q", "-b", "side")
    git(repo, "mv", "plans/greet", "plans/moved")
    commit_all(repo, "agent: move greet", AGENT)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "agent: merge side", "side", env=identity(*AGENT))
    rows = _index_rows(repo, [git(repo, "rev-parse", "HEAD").strip()])
    assert rows["plans/moved"][2:4] == (approval, ALICE[1]), rows
    run_once(repo)
    assert _started(repo) == ["plangate: start plans/moved"]
