"""A merge whose resolution drops a twin claim makes its merger a writer of the plan unless
git's own clean join of the parents drops it too (docs/approvals.md, merges). In a
criss-cross (two merge bases) git joins the bases into a virtual one: the base ``git
merge-base`` names may hold the claim while the virtual base lacks it, and git's join then
KEEPS the claim; the drop is the merger's choice (round 98, r98held).

Seen before the fix: tests/adversarial/test_round98_approve_atk98d.py (``cx``, ``cxl``,
``cxf``, ``cxs``): Bob's criss-cross merge dropped the agent's twin ``plans/GREET/PLAN.yml/
x.txt`` and his approval of ``plans/greet`` ran."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.gitenv import identity
from tests.support.gitkit import AGENT, BOB, MALLORY, approve, commit_all, git, run_once, write_plan

CAROL = ("Carol", "carol@ops.example.com")
CLAIM = "plans/GREET/PLAN.yml/x.txt"


def _put(repo: Path, path: str, text: str) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def _merge(repo: Path, who: tuple[str, str], *args: str) -> None:
    git(repo, "merge", "-q", "--no-ff", "--no-edit", *args, env=identity(*who), check=False)


def _criss_cross(repo: Path) -> None:
    """The agent's claim on main; Carol deletes it on main (Y1); branch x: a note (X1, made
    after Y1: the base ``git merge-base`` names, holding the claim); the agent merges Y1 into
    x and puts the claim back (X2); Carol merges X1 into main (Y2, lacks it)."""
    write_plan(repo, "greet")
    commit_all(repo, "agent: greet", AGENT)
    run_once(repo)  # frozen
    _put(repo, CLAIM, "claim\n")
    commit_all(repo, "agent: twin claim", AGENT)
    git(repo, "branch", "x")
    git(repo, "rm", "-r", "-q", "plans/GREET")
    y1 = commit_all(repo, "carol: twin gone", CAROL)
    time.sleep(1.1)  # X1 strictly newer than Y1
    git(repo, "checkout", "-q", "x")
    _put(repo, "notes/x.md", "x\n")
    x1 = commit_all(repo, "agent: note", AGENT)
    _merge(repo, AGENT, "--no-commit", y1)
    _put(repo, CLAIM, "claim\n")
    commit_all(repo, "agent: merge y1, claim back", AGENT)
    git(repo, "checkout", "-q", "main")
    _merge(repo, CAROL, x1)


def _drop(repo: Path, who: tuple[str, str], how: str) -> None:
    """``who`` merges x into main leaving the claim out (``rm``: ``--no-commit`` then ``git
    rm``; ``ours``: ``-s ours``)."""
    assert len(git(repo, "merge-base", "--all", "main", "x").split()) == 2
    named = git(repo, "merge-base", "main", "x").strip()
    assert git(repo, "ls-tree", "-r", named, "--", CLAIM).strip()  # the named base holds it
    join = git(repo, "merge-tree", "--write-tree", "main", "x").split()[0]
    assert git(repo, "ls-tree", "-r", join, "--", CLAIM).strip()  # git's own join keeps it
    if how == "ours":
        _merge(repo, who, "-s", "ours", "x")
        return
    _merge(repo, who, "--no-commit", "x")
    git(repo, "rm", "-r", "-q", "-f", "plans/GREET")
    commit_all(repo, "merge x, twin dropped", who)


def _started(repo: Path) -> bool:
    return bool(git(repo, "log", "--format=%s", "--grep=^plangate: start plans/greet").strip())


@pytest.mark.parametrize("how", ["rm", "ours"])
def test_a_criss_cross_merge_dropping_a_claim_git_keeps_makes_its_merger_a_writer(
    repo: Path, how: str
) -> None:
    _criss_cross(repo)
    _drop(repo, BOB, how)
    assert not git(repo, "ls-files", CLAIM).strip()
    approve(repo, "greet", BOB)
    run_once(repo)
    assert not _started(repo)
    assert "E_SELF_APPROVAL" in git(repo, "log", "-1", "--format=%B")


def test_the_same_drop_by_another_hand_leaves_bobs_approval_standing(repo: Path) -> None:
    _criss_cross(repo)
    _drop(repo, MALLORY, "rm")
    approve(repo, "greet", BOB)
    run_once(repo)
    assert _started(repo)
