"""Merges of pull requests that move a plan (rounds 45-46, issue 11): which version a merge's
status approves when the plan was moved on one side since the branch was cut.

A status a merge changes came through git's merge machinery when merging the parents again
(``git merge-tree``) gives the merge's blob at that path; it then counts only when a merged
branch held that very version with it in a file the branch changed since the merge base, at
any path (no rename pairs: round 46). Otherwise ``E_PLAN_HASH_MISMATCH``: nothing runs.

Seen before the fix: the branch's move held (the merge's file at the branch's path differs
from the branch's); main's move with an edit BROKE (the branch holds no file at the new
path, so the carried status read as the merge's own: the edited version started). The
adversarial twin: tests/adversarial/test_round45_approve_prshapes.py (``behind-move-edit``).
Round 45's fix asked git diff for the rename pairs; past git's rename limit the move was
missed again (the last test; tests/adversarial/test_round46_approve_renamelimit.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitenv import commit_all, identity
from tests.support.gitkit import (
    AGENT,
    ALICE,
    controller,
    edit_status,
    git,
    head_plan,
    run_once,
    subjects,
    submitted,
    write_plan,
)
from tests.support.plantext import greet_plan


def _edit(repo: Path, slug: str) -> None:
    path = repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    assert 'why: "say hello"' in text
    path.write_text(text.replace('why: "say hello"', 'why: "say hello, and more"'))


def _branch(repo: Path, *, move: bool) -> str:
    """The agent's pull request approving the frozen plan (moved to plans/moved first)."""
    git(repo, "checkout", "-q", "-b", "pr", "main")
    slug = "greet"
    if move:
        git(repo, "mv", "plans/greet", "plans/moved")
        slug = "moved"
    edit_status(repo, slug, "approved")
    commit_all(repo, "agent asks for approval", AGENT)
    git(repo, "checkout", "-q", "main")
    return slug


def _merge(repo: Path) -> None:
    git(repo, "merge", "--no-ff", "-q", "-m", "merge pr", "pr", env=identity(*ALICE))
    assert not git(repo, "ls-files", "-u").strip()


def _started(repo: Path) -> list[str]:
    return [s for s in subjects(repo) if s.startswith("plangate: start")]


def _refusal(repo: Path) -> str:
    """The reason line of the controller's last ``refuse plans/moved`` commit."""
    body = git(repo, "log", "-1", "--format=%b", "--grep=^plangate: refuse plans/moved$")
    return body.strip().splitlines()[0] if body.strip() else ""


def _codes(repo: Path) -> dict[str, object]:
    with controller(repo) as ctl:
        return {r["plan"]: r for r in ctl.status()}


@pytest.mark.parametrize("edit_main", [True, False], ids=["edited", "unedited"])
def test_the_branch_moved_the_plan_main_edited_it(repo: Path, edit_main: bool) -> None:
    """The pull request moves the plan and approves it; on main the agent then edits the
    old path (frozen anew). git carries main's edit to the new path: the merge approves a
    version the branch never held (refused). Without the edit it is the branch's version."""
    submitted(repo)
    _branch(repo, move=True)
    if edit_main:
        _edit(repo, "greet")
        commit_all(repo, "agent edits on main", AGENT)
        run_once(repo)  # freeze the new version
    _merge(repo)
    assert not (repo / "plans" / "greet").exists()
    assert ("and more" in (repo / "plans/moved/PLAN.yml").read_text()) is edit_main
    run_once(repo)
    run_once(repo)
    if edit_main:
        assert _started(repo) == [], _codes(repo)
        assert _refusal(repo).startswith("E_PLAN_HASH_MISMATCH: the merge"), _codes(repo)
    else:
        assert _started(repo) == ["plangate: start plans/moved"], _codes(repo)


@pytest.mark.parametrize("edit_main", [True, False], ids=["edited", "unedited"])
def test_main_moved_the_plan_the_branch_approved_it(repo: Path, edit_main: bool) -> None:
    """The pull request approves the plan where it was; on main the agent then moves it
    (and edits it): git carries the branch's status to the new path. The branch held that
    status with the old version: the edited one is refused; the same version starts."""
    submitted(repo)
    _branch(repo, move=False)
    if edit_main:
        _edit(repo, "greet")
    git(repo, "mv", "plans/greet", "plans/moved")
    commit_all(repo, "agent moves on main", AGENT)
    run_once(repo)  # freeze the new version
    _merge(repo)
    assert head_plan(repo, "moved")["plan"]["status"] == "approved"
    run_once(repo)
    run_once(repo)
    if edit_main:
        assert _started(repo) == [], _codes(repo)
        assert _refusal(repo).startswith("E_PLAN_HASH_MISMATCH: the merge"), _codes(repo)
    else:
        assert _started(repo) == ["plangate: start plans/moved"], _codes(repo)


def test_an_honest_pull_request_that_moves_and_approves_starts(repo: Path) -> None:
    submitted(repo)
    _branch(repo, move=True)
    (repo / "NOTES").write_text("unrelated\n")
    commit_all(repo, "unrelated on main", AGENT)
    _merge(repo)
    run_once(repo)
    run_once(repo)
    assert _started(repo) == ["plangate: start plans/moved"], _codes(repo)


def _junk(repo: Path, prefix: str, remove: str | None = None) -> None:
    """1,001 files ``plans/zz-junk/<prefix><i>.txt`` of one text, replacing the ``remove``
    ones (another text: no exact renames): past git diff's rename limit (1,000)."""
    junk = repo / "plans" / "zz-junk"
    junk.mkdir(parents=True, exist_ok=True)
    for i in range(1001):
        if remove:
            (junk / f"{remove}{i}.txt").unlink()
        (junk / f"{prefix}{i}.txt").write_text(f"{prefix} junk\n" * 40)


def test_main_moved_the_plan_past_git_s_rename_limit(repo: Path) -> None:
    """Round 46: as above (edited), in a commit that also replaces 1,001 files by 1,001 others
    and adds another plan (``PLAN.yml`` is no unique basename): ``git diff --find-renames``
    gives up pairing the moved plan, the merge (ort: one relevant source) still carries the
    branch's status to it. The branch held the old version: refused, whatever git's pairs."""
    _junk(repo, "a")
    submitted(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    _branch(repo, move=False)
    _edit(repo, "greet")
    git(repo, "mv", "plans/greet", "plans/moved")
    write_plan(repo, "other", greet_plan("Other", "Say something else to others", "others"))
    _junk(repo, "b", remove="a")
    commit_all(repo, "agent moves on main, tidies", AGENT)
    pairs = git(repo, "diff", "--find-renames", "--name-status", base, "HEAD", "--", "plans")
    assert not [row for row in pairs.splitlines() if row.startswith("R")], pairs[:500]
    run_once(repo)  # freeze the new version
    _merge(repo)
    assert head_plan(repo, "moved")["plan"]["status"] == "approved"
    assert "and more" in (repo / "plans/moved/PLAN.yml").read_text()
    run_once(repo)
    run_once(repo)
    assert _started(repo) == [], _codes(repo)
    assert _refusal(repo).startswith("E_PLAN_HASH_MISMATCH: the merge"), _codes(repo)


def test_a_merge_approving_many_plans_asks_git_once_per_plan_not_per_pair(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: deciding whether a merged branch brought each plan's status read, for every
    plan, every other plan the branch changed, and asked git whether the merge still held it:
    a million lookups for a merge approving a thousand plans. Each merge's side is indexed
    once; what each plan's decision reads of it is the same."""
    from controller.git.gitrepo import GitRepo

    slugs = [f"p{i:02d}" for i in range(24)]
    for slug in slugs:
        write_plan(repo, slug, greet_plan(slug, f"task {slug}", '"x"'))
    commit_all(repo, "add plans", AGENT)
    run_once(repo)  # every plan frozen
    git(repo, "checkout", "-q", "-b", "pr", "main")
    for slug in slugs:
        edit_status(repo, slug, "approved")
    git(repo, "mv", "plans/p00", "plans/moved")  # one moved on the branch: the merge lacks p00
    commit_all(repo, "approve them all", ALICE)
    git(repo, "checkout", "-q", "main")
    _merge(repo)
    asked: list[str] = []
    blob_sha = GitRepo.blob_sha

    def counting(self: GitRepo, commit: str, path: str) -> str | None:
        asked.append(path)
        return blob_sha(self, commit, path)

    monkeypatch.setattr(GitRepo, "blob_sha", counting)
    run_once(repo)
    started = {s.removeprefix("plangate: start ") for s in _started(repo)}
    assert {f"plans/{slug}" for slug in slugs[1:]} <= started
    assert len(asked) < 10 * len(slugs), len(asked)  # 24 x 24 pairs asked before
