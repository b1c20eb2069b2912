"""A plan file moved with its bytes kept writes no content (round 69, issue 11): whatever part
of its path changes, its folder (``git mv plans/a plans/b``) or its file's name in the folder
(``PLAN.yml`` <-> ``PLAN.yaml``), with her approval in the same commit (all bytes kept but a
plain status line) or before it. The content's writers are the ones of the content moved
(by hash, and a folder's carried to the new one): her move of the agent's plan leaves her
free to approve it; her edit with the move, or her own plan moved, does not.

Seen before the fix: Alice's approval and rename of PLAN.yml to PLAN.yaml was
``E_SELF_APPROVAL`` ("alice wrote or changed this plan's content"), as was her move of the
plan's folder (tests/adversarial/test_round69_surface_planfile.py, ``mvalice``,
``mvalice2``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.plan import yamlio
from tests.support.gitenv import commit_all
from tests.support.gitkit import ALICE, edit_status, git, run_once, subjects, submitted

MOVES = {
    "folder": ("plans/greet", "plans/moved"),
    "file": ("plans/greet/PLAN.yml", "plans/greet/PLAN.yaml"),
}


def _refusal(repo: Path) -> str:
    return git(repo, "log", "-1", "--format=%b", "--grep=^plangate: refuse").strip()


def _move(repo: Path, how: str, approve_first: bool) -> str:
    edit_status(repo, "greet", "approved")
    if approve_first:
        commit_all(repo, "approve", ALICE)
    git(repo, "mv", *MOVES[how])
    commit_all(repo, "approve, and move", ALICE)
    run_once(repo)
    run_once(repo)
    return "plans/moved" if how == "folder" else "plans/greet"


@pytest.mark.parametrize("approve_first", [False, True], ids=["with-approval", "after"])
@pytest.mark.parametrize("how", list(MOVES))
def test_her_move_of_the_agents_plan_writes_nothing(
    repo: Path, how: str, approve_first: bool
) -> None:
    submitted(repo)
    plan = _move(repo, how, approve_first)
    assert f"plangate: start {plan}" in subjects(repo), _refusal(repo)


def test_a_rename_back_to_plan_yml_writes_nothing(repo: Path) -> None:
    submitted(repo)
    git(repo, "mv", "plans/greet/PLAN.yml", "plans/greet/PLAN.yaml")
    commit_all(repo, "agent: PLAN.yaml")
    run_once(repo)
    path = repo / "plans/greet/PLAN.yaml"
    path.write_text(
        yamlio.set_scalar(yamlio.read_yaml(path.read_text()), ("plan", "status"), "approved")
    )
    git(repo, "mv", "plans/greet/PLAN.yaml", "plans/greet/PLAN.yml")
    commit_all(repo, "approve, as PLAN.yml", ALICE)
    run_once(repo)
    run_once(repo)
    assert "plangate: start plans/greet" in subjects(repo), _refusal(repo)


@pytest.mark.parametrize("how", list(MOVES))
def test_a_move_with_an_edit_is_writing(repo: Path, how: str) -> None:
    submitted(repo)
    edit_status(repo, "greet", "approved")
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text() + "# reviewed\n")
    git(repo, "mv", *MOVES[how])
    commit_all(repo, "approve, note and move", ALICE)
    run_once(repo)
    assert not [s for s in subjects(repo) if s.startswith("plangate: start")]
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


@pytest.mark.parametrize("how", list(MOVES))
def test_her_own_plan_moved_by_her_is_still_hers(repo: Path, how: str) -> None:
    submitted(repo, who=ALICE)
    _move(repo, how, approve_first=False)
    assert not [s for s in subjects(repo) if s.startswith("plangate: start")]
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)
