"""A copy of a plan carries its source's writers, its owned-block editors' hold included
(round 73, r73approve; docs/approvals.md, "Who changed the content").

An owned-block editor (bytes of his in the controller's ``approval:``/``execution:`` blocks,
set aside) is no writer of the version his edit sits beside, but writes every LATER version of
that plan, wherever it moves; a copy takes the writers of what it is copied from. So a copy
git pairs (its source touched in the same commit: ``C100``) and a byte-exact copy of a plan
left untouched (which git's ``-C`` pairs with nothing; found by the index's blobs) both take
the source's changers and folder writers (an approver's ``NOTES.md`` there) and hold its
owned-block editors: the agent's later lift of his bytes into the copy makes him its writer
(``E_SELF_APPROVAL``). The same version copied unchanged is still not his writing.

Seen before the fix: tests/adversarial/test_round73_approve_ownedbytes.py
(``own-cptouch-lift``, ``own-appr-cp-lift``, ``note-cp-lift``): Bob's approval of the lifted
copy ran."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.gitkit import AGENT, BOB, commit_all, edit_status, git, run_once, subjects
from tests.support.gitkit import submitted as _submitted

SOURCE, COPY = "plans/greet", "plans/copy"
OWNED = 'approval:\n  status: approved\n  approver: bob\n  payload: "bob-was-here"\n'


def _refusal(repo: Path) -> str:
    return git(repo, "log", "-1", "--format=%b", "--grep=^plangate: refuse").strip()


def _copy_ran(repo: Path) -> bool:
    return f"plangate: start {COPY}" in subjects(repo)


def _owned_edit(repo: Path) -> None:
    """Bob's bytes in the owned ``approval:`` block (a forged record), a pass, and the agent
    takes his block out again: the plan's file is the controller's version, byte for byte."""
    path = repo / SOURCE / "PLAN.yml"
    was = path.read_text()
    path.write_text(was + OWNED)
    commit_all(repo, "bob: record", BOB)
    run_once(repo)
    path.write_text(was)
    commit_all(repo, "agent: the record as it was", AGENT)


def _copy(repo: Path, touch: bool = False, note: bool = True) -> None:
    """The agent copies the plan's folder byte for byte (its file alone: ``note`` False);
    ``touch``: the same commit adds a comment to the source (git's ``-C`` pairs the copy)."""
    if note:
        shutil.copytree(repo / SOURCE, repo / COPY)
    else:
        (repo / COPY).mkdir(parents=True)
        shutil.copy(repo / SOURCE / "PLAN.yml", repo / COPY / "PLAN.yml")
    if touch:
        path = repo / SOURCE / "PLAN.yml"
        path.write_text(path.read_text() + "# agent: copied\n")
    commit_all(repo, "agent: copy", AGENT)
    paired = git(repo, "show", "-M", "-C", "--name-status", "--format=", "HEAD")
    assert (f"{SOURCE}/PLAN.yml\t{COPY}/PLAN.yml" in paired) is touch, paired


def _lift(repo: Path) -> None:
    """The agent's next commit puts Bob's payload into the copy's params (a new version)."""
    path = repo / COPY / "PLAN.yml"
    text = path.read_text()
    assert "who: world" in text
    path.write_text(text.replace("who: world", "who: bob-was-here", 1))
    commit_all(repo, "agent: extra in the copy", AGENT)


def _bob_approves_the_copy(repo: Path) -> None:
    run_once(repo)  # the copy frozen
    edit_status(repo, "copy", "approved")
    commit_all(repo, "approve copy", BOB)
    run_once(repo)


@pytest.mark.parametrize("touch", [True, False], ids=["paired", "exact"])
def test_a_copy_takes_its_sources_owned_block_hold(repo: Path, touch: bool) -> None:
    _submitted(repo)
    _owned_edit(repo)
    _copy(repo, touch=touch)
    _lift(repo)
    _bob_approves_the_copy(repo)
    assert not _copy_ran(repo)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


@pytest.mark.parametrize("note", [True, False], ids=["note-copied", "plan-alone"])
def test_an_exact_copy_takes_its_source_folders_writers(repo: Path, note: bool) -> None:
    """Bob's note in the source's folder: he writes the plan that folder holds, and a copy of
    it byte for byte (the note with it or not), as a copy git pairs does."""
    _submitted(repo)
    (repo / SOURCE / "NOTES.md").write_text("bob: who: bob-was-here\n")
    commit_all(repo, "bob: note", BOB)
    _copy(repo, note=note)
    _bob_approves_the_copy(repo)
    assert not _copy_ran(repo)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


@pytest.mark.parametrize("touch", [True, False], ids=["paired", "exact"])
def test_an_owned_block_editor_may_approve_the_same_version_copied(repo: Path, touch: bool) -> None:
    """The hold writes LATER versions: the copy unchanged is the version his edit sat beside
    (no writing of his), and his approval of it runs."""
    _submitted(repo)
    _owned_edit(repo)
    _copy(repo, touch=touch)
    _bob_approves_the_copy(repo)
    assert _copy_ran(repo), _refusal(repo)
