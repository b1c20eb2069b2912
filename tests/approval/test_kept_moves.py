"""A plan file moved with its bytes kept writes no content (round 69, issue 11): whatever part
of its path changes, its folder (``git mv plans/a plans/b``) or its file's name in the folder
(``PLAN.yml`` <-> ``PLAN.yaml``), with her approval in the same commit (all bytes kept but a
plain status line) or before it. The content's writers are the ones of the content moved
(by hash, and a folder's carried to the new one): her move of the agent's plan leaves her
free to approve it; her edit with the move, or her own plan moved, does not.

Seen before the fix: Alice's approval and rename of PLAN.yml to PLAN.yaml was
``E_SELF_APPROVAL`` ("alice wrote or changed this plan's content"), as was her move of the
plan's folder (tests/adversarial/test_round69_surface_planfile.py, ``mvalice``,
``mvalice2``).

Round 70: plans trading folders in one commit (two swapped, three rotated byte for byte: no
file removed) are moves too, approved after or in that commit, and a move on a merged branch
(``--no-ff``) writes nothing as on the line; Alice was ``E_SELF_APPROVAL`` (and her swap
approving in its commit ``E_PLAN_HASH_MISMATCH``) before
(tests/adversarial/test_round70_approve_moves.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.plan import yamlio
from tests.support.gitenv import commit_all, identity
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    GATED,
    edit_status,
    git,
    run_once,
    subjects,
    submitted,
    write_plan,
)
from tests.support.plantext import greet_plan

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


#: Round 70: plans trading folders in one commit, no file removed (a swap, a rotation)
TRADES = {
    "swap": ["greet", "other"],
    "rotation": ["greet", "other", "third"],
}


def _plans(repo: Path, slugs: list[str], who: tuple[str, str] = AGENT) -> None:
    """One plan per folder, alike but for whom they greet (most of each kept in the other:
    no plan file 'rewritten in place'); frozen by the controller."""
    for slug in slugs:
        text = greet_plan("Greet", "Say hello", f'"{slug} people"')
        write_plan(repo, slug, text + '      tone: "warm"\n      hour: "nine"\n      ask: "tea"\n')
    commit_all(repo, "plans", who)
    run_once(repo)


def _trade(repo: Path, slugs: list[str]) -> None:
    """Each folder's PLAN.yml takes the bytes of the one before it (greet takes the last's)."""
    paths = [repo / "plans" / slug / "PLAN.yml" for slug in slugs]
    texts = [path.read_bytes() for path in paths]
    for i, path in enumerate(paths):
        path.write_bytes(texts[i - 1])


@pytest.mark.parametrize("with_approval", [False, True], ids=["after", "with-approval"])
@pytest.mark.parametrize("how", list(TRADES))
def test_plans_trading_folders_write_nothing(repo: Path, how: str, with_approval: bool) -> None:
    _plans(repo, TRADES[how])
    _trade(repo, TRADES[how])
    if with_approval:  # judged as an approval made with a move to a new folder
        edit_status(repo, "greet", "approved")
    commit_all(repo, f"alice: {how}", ALICE)
    if not with_approval:
        edit_status(repo, "greet", "approved")
        commit_all(repo, "alice: approve", ALICE)
    run_once(repo)
    run_once(repo)
    assert "plangate: start plans/greet" in subjects(repo), _refusal(repo)


def test_a_swap_with_an_edit_is_writing(repo: Path) -> None:
    _plans(repo, TRADES["swap"])
    _trade(repo, TRADES["swap"])
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text() + "# reviewed\n")
    commit_all(repo, "alice: swap, note", ALICE)
    edit_status(repo, "greet", "approved")
    commit_all(repo, "alice: approve", ALICE)
    run_once(repo)
    assert not [s for s in subjects(repo) if s.startswith("plangate: start")]
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def test_a_swap_carries_the_source_folders_writers(repo: Path) -> None:
    """Bob's note stays in ``other``; the plan it sat beside goes to ``greet`` with his name,
    however alike the two plans are (no 'rewritten in place' to tell a swap by)."""
    _plans(repo, TRADES["swap"])
    (repo / "plans/other/NOTES.md").write_text("bob: check the host first\n")
    commit_all(repo, "bob: a note", BOB)
    _trade(repo, TRADES["swap"])
    commit_all(repo, "alice: swap", ALICE)
    edit_status(repo, "greet", "approved")
    commit_all(repo, "bob: approve", BOB)
    run_once(repo)
    assert not [s for s in subjects(repo) if s.startswith("plangate: start")]
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def _merged_move(repo: Path, with_approval: bool) -> None:
    """Alice moves the plan's folder on her branch (approving in that commit, or not) and
    merges the branch ``--no-ff``."""
    git(repo, "checkout", "-q", "-b", "alice/move")
    git(repo, "mv", "plans/greet", "plans/moved")
    if with_approval:
        edit_status(repo, "moved", "approved")
    commit_all(repo, "alice: move", ALICE)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge", "alice/move", env=identity(*ALICE))


@pytest.mark.parametrize("with_approval", [False, True], ids=["after", "in-the-move"])
def test_her_move_merged_no_ff_writes_nothing(repo: Path, with_approval: bool) -> None:
    """Round 70: the move is her branch's commit; the merge only brings it."""
    submitted(repo)
    _merged_move(repo, with_approval)
    if not with_approval:
        edit_status(repo, "moved", "approved")
        commit_all(repo, "alice: approve", ALICE)
    run_once(repo)
    run_once(repo)
    assert "plangate: start plans/moved" in subjects(repo), _refusal(repo)


def test_her_own_plan_moved_on_a_merged_branch_is_still_hers(repo: Path) -> None:
    submitted(repo, who=ALICE)
    _merged_move(repo, with_approval=False)
    edit_status(repo, "moved", "approved")
    commit_all(repo, "alice: approve", ALICE)
    run_once(repo)
    assert not [s for s in subjects(repo) if s.startswith("plangate: start")]
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


#: Round 71: where her approval of a plan she moved on her review branch is made
WHERE = ["in-the-move", "next-commit", "in-the-merge"]


def _merged_trade(repo: Path, how: str, where: str) -> str:
    """Alice moves (``git mv`` of the folder) or rotates plans on her branch, approves ``where``,
    and merges the branch ``--no-ff``; the plan she approved."""
    git(repo, "checkout", "-q", "-b", "alice/move")
    if how == "folder":
        git(repo, "mv", "plans/greet", "plans/moved")
    else:
        _trade(repo, TRADES[how])
    slug = "moved" if how == "folder" else "greet"
    if where == "in-the-move":
        edit_status(repo, slug, "approved")
    commit_all(repo, f"alice: {how}", ALICE)
    if where == "next-commit":
        edit_status(repo, slug, "approved")
        commit_all(repo, "alice: approve", ALICE)
    git(repo, "checkout", "-q", "main")
    if where != "in-the-merge":
        git(repo, "merge", "-q", "--no-ff", "-m", "merge", "alice/move", env=identity(*ALICE))
        return slug
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "alice/move", env=identity(*ALICE))
    edit_status(repo, slug, "approved")
    commit_all(repo, "merge, approving", ALICE)
    return slug


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("how", ["folder", "rotation"])
def test_a_merged_move_writes_nothing_whenever_approved(repo: Path, how: str, where: str) -> None:
    """Round 71: approved in a LATER commit of her branch (or in the merge), her move merged
    ``--no-ff`` made her a producer of the plan: the approval's commit, a status change of
    the moved content, was counted as making it (``E_SELF_APPROVAL``)."""
    if how == "folder":
        submitted(repo)
    else:
        _plans(repo, TRADES[how])
    slug = _merged_trade(repo, how, where)
    run_once(repo)
    run_once(repo)
    assert f"plangate: start plans/{slug}" in subjects(repo), _refusal(repo)


@pytest.mark.parametrize("where", WHERE)
def test_her_own_plan_moved_on_a_merged_branch_stays_hers_whenever_approved(
    repo: Path, where: str
) -> None:
    submitted(repo, who=ALICE)
    _merged_trade(repo, "folder", where)
    run_once(repo)
    assert not [s for s in subjects(repo) if s.startswith("plangate: start")]
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def _merged_rename(repo: Path, note: bool) -> None:
    """Alice's branch approves the plan AND renames it PLAN.yml -> PLAN.yaml in one commit
    (``note``: a comment of hers added too), merged ``--no-ff``."""
    git(repo, "checkout", "-q", "-b", "alice/rename")
    edit_status(repo, "greet", "approved")
    if note:
        with (repo / "plans/greet/PLAN.yml").open("a") as out:
            out.write("# reviewed\n")
    git(repo, "mv", *MOVES["file"])
    commit_all(repo, "alice: approve, as PLAN.yaml", ALICE)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge", "alice/rename", env=identity(*ALICE))
    run_once(repo)
    run_once(repo)


def test_a_merged_rename_with_her_approval_writes_nothing(repo: Path) -> None:
    """Round 71: the merge's rename was the merger touching a new plan file (her name added
    to its changers: ``E_SELF_APPROVAL``)."""
    submitted(repo)
    _merged_rename(repo, note=False)
    assert "plangate: start plans/greet" in subjects(repo), _refusal(repo)


def test_a_merged_rename_with_her_bytes_is_writing(repo: Path) -> None:
    submitted(repo)
    _merged_rename(repo, note=True)
    assert not [s for s in subjects(repo) if s.startswith("plangate: start")]
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


def _statuses(repo: Path, path: str) -> list[str]:
    """The status each commit touching ``path`` left there, oldest first."""
    out = git(repo, "log", "--reverse", "--format=%H", "--", path).split()
    return [
        str(yamlio.read_yaml(git(repo, "show", f"{sha}:{path}")).data["plan"]["status"])
        for sha in out
        if git(repo, "ls-tree", sha, "--", path).strip()
    ]


@pytest.mark.parametrize("noted", [False, True], ids=["kept", "noted"])
@pytest.mark.parametrize("merged", [False, True], ids=["line", "merged"])
def test_a_gate_approved_with_a_rename_goes_on(repo: Path, merged: bool, noted: bool) -> None:
    """Round 71: her gate approval of the paused plan made with a rename to PLAN.yaml (on her
    branch, merged ``--no-ff``) was read as a new plan whose version had run already:
    ``E_ALREADY_EXECUTED``, and the paused run committed ``pending_approval``. A rename is no
    new plan: kept, the gate's action runs; with a comment of hers, the touch is hers (a
    refusal), and the paused run is never written as a pending plan either way."""
    write_plan(repo, "greet", GATED)
    commit_all(repo, "add greet", AGENT)
    run_once(repo)
    edit_status(repo, "greet", "approved")
    commit_all(repo, "approve", ALICE)
    run_once(repo)
    if merged:
        git(repo, "checkout", "-q", "-b", "alice/gate")
    edit_status(repo, "greet", "approved")
    if noted:
        with (repo / "plans/greet/PLAN.yml").open("a") as out:
            out.write("# second look done\n")
    git(repo, "mv", *MOVES["file"])
    commit_all(repo, "alice: gate, as PLAN.yaml", ALICE)
    if merged:
        git(repo, "checkout", "-q", "main")
        git(repo, "merge", "-q", "--no-ff", "-m", "merge", "alice/gate", env=identity(*ALICE))
    run_once(repo)
    run_once(repo)
    after = _statuses(repo, "plans/greet/PLAN.yaml")
    assert "pending_approval" not in after, (after, _refusal(repo))
    if noted:
        assert after[-1] != "completed", after
        assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)
    else:
        assert after[-1] == "completed", (after, _refusal(repo))
