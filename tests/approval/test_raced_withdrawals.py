"""An author keeps the right to withdraw her plan when someone raced its bytes onto the
branch at ANOTHER folder (round 122, atk122a, ``author-withdrawal-lost-to-a-raced-copy``).

Dave's pull request adds ``plans/greet`` (pending). Before Bob merges it, Mallory commits the
same bytes at ``plans/greet-m`` on main (pending, as a draft, or added and deleted again),
or on a branch forked before the pull request that she merges after it. The two makings
hold neither the other, so the version's originators (round 35's race clause: only someone
in both) were nobody: Dave's rejection of his own plan was ``E_APPROVER_NOT_ALLOWED`` and
Bob's approval ran it. An author's right to withdraw the plan at a folder is now read from
the makings of the version AT that folder (its making(s) afresh there), the originators
everywhere only when none was made there (a copy; a move brings those of the folder it
left, round 124, below). So Mallory's copy elsewhere takes
nothing from Dave and gives her nothing at his plan; the same bytes raced in at the plan's
own path stay as round 35 left them (git cannot tell who copied whom): nobody but an
allowed approver may withdraw it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from controller.service.reconcile import Controller
from controller.settings import config_from_data
from tests.support.gitenv import run_cli
from tests.support.gitkit import PLAN, approve, edit_status, subjects, write_plan

DAVE = ("Dave", "dave@example.com")  # a human plan author, no approver
MALLORY = ("Mallory", "mallory@example.com")
BOB = ("Bob", "bob@ops.example.com")


def _data(repo: Path) -> dict[str, Any]:
    return {
        "repo": str(repo),
        "state_dir": str(repo.parent / "state"),
        "approval": {"approvers": ["alice@example.com", "*@ops.example.com"]},
        "tools": {"greet": {"kind": "echo"}},
    }


def _row(repo: Path, slug: str = "greet") -> dict[str, Any]:
    """One controller pass, then the status row of ``plans/<slug>`` (with its notes)."""
    ctl = Controller(config_from_data(_data(repo), repo.parent / "plangate.yml"))
    try:
        ctl.run_once()
        rows = {str(r["plan"]): r for r in ctl.status(reasons=True)}
    finally:
        ctl.close()
    return rows.get(f"plans/{slug}", {})


def _git(repo: Path, *args: str, who: tuple[str, str] = DAVE) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": who[0],
        "GIT_COMMITTER_EMAIL": who[1],
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def _commit(repo: Path, msg: str, who: tuple[str, str]) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", msg, who=who)
    return _git(repo, "rev-parse", "HEAD").strip()


def _reject(repo: Path, who: tuple[str, str], slug: str = "greet") -> None:
    edit_status(repo, slug, "rejected")
    _commit(repo, f"reject {slug}", who)


def _notes(row: dict[str, Any]) -> str:
    return " ".join(map(str, row.get("notes") or []))


def _starts(repo: Path, slug: str = "greet") -> list[str]:
    return [s for s in subjects(repo) if s.startswith(f"plangate: start plans/{slug}")]


def _audit(repo: Path) -> dict[str, Any]:
    clone = repo.parent / "clone"
    _git(repo.parent, "clone", "-q", str(repo), str(clone))
    result = run_cli("audit", "--json", cwd=clone)
    assert result.returncode in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _raced(repo: Path, how: str) -> None:
    """Dave's pull request adds ``plans/greet``; Mallory lands its bytes elsewhere (``how``);
    the pull request is merged by Bob; one pass."""
    _git(repo, "checkout", "-q", "-b", "pr")
    write_plan(repo)
    _commit(repo, "dave: greet", DAVE)
    _git(repo, "checkout", "-q", "main")
    if how == "later":  # her branch forked before the pull request, merged after it
        _git(repo, "checkout", "-q", "-b", "mine")
        write_plan(repo, "greet-m")
        _commit(repo, "mallory: the same bytes", MALLORY)
        _git(repo, "checkout", "-q", "main")
        _git(repo, "merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=BOB)
        _git(repo, "merge", "-q", "--no-ff", "-m", "merge mine", "mine", who=MALLORY)
    else:
        text = PLAN.replace("pending_approval", "draft") if how == "draft" else PLAN
        assert text != PLAN or how != "draft"
        write_plan(repo, "greet-m", text)
        _commit(repo, "mallory: the same bytes first", MALLORY)
        if how == "gone":
            _git(repo, "rm", "-q", "-r", "plans/greet-m")
            _commit(repo, "mallory: gone again", MALLORY)
        _git(repo, "merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=BOB)
    _row(repo)


@pytest.mark.parametrize("how", ["first", "draft", "gone", "later"])
def test_a_race_at_another_folder_leaves_the_author_his_withdrawal(repo: Path, how: str) -> None:
    """Dave rejects his raced plan: it stays rejected, Bob's approvals (twice) run nothing,
    and the fresh-clone audit lists Dave's rejection and flags nothing."""
    _raced(repo, how)
    _reject(repo, DAVE)
    row = _row(repo)
    assert row.get("status") == "rejected", row
    assert "E_APPROVER_NOT_ALLOWED" not in _notes(row), row
    for _ in range(2):
        approve(repo, who=BOB)
        row = _row(repo)
    assert row.get("status") == "rejected", row
    assert not _starts(repo), subjects(repo)
    report = _audit(repo)
    mine = [d for d in report.get("decisions", []) if d.get("plan") == "plans/greet"]
    assert [(d.get("kind"), d.get("by")) for d in mine] == [("reject", DAVE[1])], mine
    flagged = [f for f in report.get("findings", []) if f.get("kind") == "withdraw-not-allowed"]
    assert not flagged, flagged


@pytest.mark.parametrize("how", ["first", "later"])
def test_the_racer_gains_nothing_at_the_authors_plan(repo: Path, how: str) -> None:
    """Rule A's purpose kept: Mallory's rejection of Dave's raced plan is ignored. Her copy
    at her own folder is hers there (she made it afresh at ``plans/greet-m``): her rejection
    withdraws that copy and vetoes no version (the producers, who may veto it by hash, are
    the people in both makings: nobody), so Bob's approval runs Dave's plan once."""
    _raced(repo, how)
    _reject(repo, MALLORY, "greet-m")
    copy = _row(repo, "greet-m")
    assert copy.get("status") == "rejected", copy
    _reject(repo, MALLORY)
    row = _row(repo)
    assert "E_APPROVER_NOT_ALLOWED" in _notes(row), row
    assert "E_VERSION_WITHDRAWN" not in _notes(row), row
    approve(repo, who=BOB)
    _row(repo)
    _row(repo)
    assert len(_starts(repo)) == 1, subjects(repo)


def test_check_predicts_the_authors_withdrawal_of_a_raced_plan(repo: Path) -> None:
    """``plangate check --as bob`` of a pull request where Dave rejects his raced plan and
    Mallory then sets it ``approved`` predicts no start, as the controller then does."""
    _raced(repo, "first")
    _git(repo, "checkout", "-q", "-b", "review")
    _reject(repo, DAVE)
    edit_status(repo, "greet", "approved")
    _commit(repo, "mallory: approve", MALLORY)
    _git(repo, "checkout", "-q", "main")
    config = repo.parent / "plangate.yml"
    config.write_text(json.dumps(_data(repo)))
    told = run_cli(
        "check", "--config", str(config), "--base", "main", "--head", "review",
        "--as", BOB[1], "--format", "json", cwd=repo,
    )  # fmt: skip
    plans = {p["plan"]: p for p in json.loads(told.stdout)["plans"]}
    assert plans["plans/greet"].get("outcome") != "start", plans["plans/greet"]
    _git(repo, "merge", "-q", "--no-ff", "-m", "merge review", "review", who=BOB)
    _row(repo)
    _row(repo)
    assert not _starts(repo), subjects(repo)


def test_the_same_bytes_raced_to_the_same_path_stay_nobodys(repo: Path) -> None:
    """The limit (round 35 unchanged): Mallory commits the pull request's very file at
    ``plans/greet`` first and the merge changes nothing. Git cannot tell who copied whom, so
    Dave's rejection (as hers would) withdraws nothing and Bob's approval runs it; an
    allowed approver's rejection still withdraws it."""
    _git(repo, "checkout", "-q", "-b", "pr")
    write_plan(repo)
    _commit(repo, "dave: greet", DAVE)
    _git(repo, "checkout", "-q", "main")
    write_plan(repo)
    _commit(repo, "mallory: the same file first", MALLORY)
    _git(repo, "merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=BOB)
    _row(repo)
    _reject(repo, DAVE)
    row = _row(repo)
    assert "E_APPROVER_NOT_ALLOWED" in _notes(row), row
    approve(repo, who=BOB)
    _row(repo)
    _row(repo)
    assert len(_starts(repo)) == 1, subjects(repo)


# -- round 124: a move carries the plan's originators at its folder -------------------------
# (atk124a, ``author-withdrawal-lost-to-race-then-move``): once the raced plan was moved
# (``git mv plans/greet plans/greet-x``, by anyone), the new folder had no making, so the
# originators everywhere, which the race made nobody, were read: Dave's rejection at the new
# folder was ``E_APPROVER_NOT_ALLOWED`` and Bob's approval ran it. A move now brings the
# plan's originators at the folder it left (following its moves back); a copy brings none.


def _mv(repo: Path, src: str, dst: str, who: tuple[str, str] = MALLORY) -> None:
    _git(repo, "mv", f"plans/{src}", f"plans/{dst}")
    _commit(repo, f"move {src} to {dst}", who)


def _decisions(report: dict[str, Any], slug: str) -> list[tuple[Any, Any]]:
    return [
        (d.get("kind"), d.get("by"))
        for d in report.get("decisions", [])
        if d.get("plan") == f"plans/{slug}"
    ]


def _own_starts(repo: Path, slug: str = "greet") -> list[str]:
    """The starts of ``plans/<slug>`` itself (not of ``plans/<slug>-c``)."""
    return [s for s in _starts(repo, slug) if s.split()[2:3] == [f"plans/{slug}"]]


def _not_allowed(report: dict[str, Any]) -> list[Any]:
    return [f for f in report.get("findings", []) if f.get("kind") == "withdraw-not-allowed"]


@pytest.mark.parametrize("how", ["passes", "one-pass", "twice", "side"])
def test_a_move_after_a_race_keeps_the_authors_withdrawal(repo: Path, how: str) -> None:
    """Mallory moves Dave's raced plan (on the line with a pass between, in the same pass as
    Dave's rejection, twice, or on her branch merged by Bob): Dave's rejection at its new
    folder counts, Bob's approvals there run nothing, and the fresh-clone audit agrees."""
    _raced(repo, "first")
    at = "greet-y" if how == "twice" else "greet-x"
    if how == "side":
        _git(repo, "checkout", "-q", "-b", "move")
        _mv(repo, "greet", "greet-x")
        _git(repo, "checkout", "-q", "main")
        _git(repo, "merge", "-q", "--no-ff", "-m", "merge move", "move", who=BOB)
    else:
        _mv(repo, "greet", "greet-x")
    if how != "one-pass":
        _row(repo, at)
    if how == "twice":
        _mv(repo, "greet-x", at, DAVE)
        _row(repo, at)
    _reject(repo, DAVE, at)
    row = _row(repo, at)
    assert row.get("status") == "rejected", row
    assert "E_APPROVER_NOT_ALLOWED" not in _notes(row), row
    for _ in range(2):
        approve(repo, at, who=BOB)
        row = _row(repo, at)
    assert row.get("status") == "rejected", row
    assert not _starts(repo, at), subjects(repo)
    report = _audit(repo)
    assert _decisions(report, at) == [("reject", DAVE[1])], report.get("decisions")
    assert not _not_allowed(report), report.get("findings")


def test_the_mover_of_a_raced_plan_gains_nothing(repo: Path) -> None:
    """The move gives its mover nothing (round 34): Mallory's rejection of Dave's raced plan
    she moved is ignored, and Bob's approval runs it once."""
    _raced(repo, "first")
    _mv(repo, "greet", "greet-x")
    _reject(repo, MALLORY, "greet-x")
    row = _row(repo, "greet-x")
    assert "E_APPROVER_NOT_ALLOWED" in _notes(row), row
    approve(repo, "greet-x", who=BOB)
    _row(repo, "greet-x")
    _row(repo, "greet-x")
    assert len(_starts(repo, "greet-x")) == 1, subjects(repo)


def test_a_move_without_a_race_keeps_the_authors_withdrawal(repo: Path) -> None:
    """The control (round 122's ``ormv``): no race, Mallory moves Dave's plan, Dave's
    rejection at its new folder counts, hers would not."""
    write_plan(repo)
    _commit(repo, "dave: greet", DAVE)
    _row(repo)
    _mv(repo, "greet", "greet-x")
    _reject(repo, DAVE, "greet-x")
    row = _row(repo, "greet-x")
    assert row.get("status") == "rejected", row
    assert "E_APPROVER_NOT_ALLOWED" not in _notes(row), row
    approve(repo, "greet-x", who=BOB)
    _row(repo, "greet-x")
    assert not _starts(repo, "greet-x"), subjects(repo)


def test_a_moved_plan_keeps_the_versions_it_was_edited_from(repo: Path) -> None:
    """A move carries the versions the plan was edited from at its old folder: Dave wrote
    v1, Mallory edited it (v2, hers alone) and moved it; Dave, an author of v2 at its old
    folder (round 119), still may withdraw it at the new one."""
    write_plan(repo)
    _commit(repo, "dave: greet", DAVE)
    _row(repo)
    path = repo / "plans" / "greet" / "PLAN.yml"
    path.write_text(path.read_text().replace("Say hello to the world", "Say hello to all"))
    _commit(repo, "mallory: v2", MALLORY)
    _mv(repo, "greet", "greet-x")
    _reject(repo, DAVE, "greet-x")
    row = _row(repo, "greet-x")
    assert row.get("status") == "rejected", row
    assert "E_APPROVER_NOT_ALLOWED" not in _notes(row), row


def test_a_copy_of_a_raced_plan_gives_nobody_its_withdrawal(repo: Path) -> None:
    """A copy is not a move (the plan stays at its folder): Mallory's copy of Dave's raced
    plan at ``plans/greet-c`` brings no originators there, so her rejection of it is
    ignored and Bob's approval runs it; Dave's own plan keeps his withdrawal."""
    _raced(repo, "first")
    write_plan(repo, "greet-c", (repo / "plans" / "greet" / "PLAN.yml").read_text())
    _commit(repo, "mallory: copy", MALLORY)
    _reject(repo, MALLORY, "greet-c")
    copy = _row(repo, "greet-c")
    assert "E_APPROVER_NOT_ALLOWED" in _notes(copy), copy
    _reject(repo, DAVE)
    row = _row(repo)
    assert row.get("status") == "rejected", row
    approve(repo, "greet-c", who=BOB)
    _row(repo, "greet-c")
    _row(repo, "greet-c")
    assert len(_starts(repo, "greet-c")) == 1, subjects(repo)
    assert not _own_starts(repo), subjects(repo)


def test_the_racer_moving_her_copy_keeps_her_right_there_and_vetoes_nothing(repo: Path) -> None:
    """Mallory moves her raced copy to ``plans/greet-n``: her right at her folder moves with
    it (her rejection there withdraws her copy), and vetoes no version: Bob's approval of
    Dave's plan runs it once."""
    _raced(repo, "first")
    _mv(repo, "greet-m", "greet-n")
    _reject(repo, MALLORY, "greet-n")
    mine = _row(repo, "greet-n")
    assert mine.get("status") == "rejected", mine
    assert "E_APPROVER_NOT_ALLOWED" not in _notes(mine), mine
    approve(repo, who=BOB)
    row = _row(repo)
    _row(repo)
    assert "E_VERSION_WITHDRAWN" not in _notes(row), row
    assert len(_own_starts(repo)) == 1, subjects(repo)


def test_a_move_into_the_racers_emptied_folder_keeps_the_authors_withdrawal(repo: Path) -> None:
    """Mallory's copy raced in at ``plans/greet-m`` and deleted again (her making there,
    ``gone``); she then moves Dave's plan into that folder. The folder's old making is her
    deleted copy's, not the moved plan's: Dave's rejection there counts, hers would not."""
    _raced(repo, "gone")
    _mv(repo, "greet", "greet-m")
    _row(repo, "greet-m")
    _reject(repo, MALLORY, "greet-m")
    row = _row(repo, "greet-m")
    assert "E_APPROVER_NOT_ALLOWED" in _notes(row), row
    edit_status(repo, "greet-m", "pending_approval")
    _commit(repo, "dave: back to pending", DAVE)
    _reject(repo, DAVE, "greet-m")
    row = _row(repo, "greet-m")
    assert row.get("status") == "rejected", row
    approve(repo, "greet-m", who=BOB)
    _row(repo, "greet-m")
    assert not _starts(repo, "greet-m"), subjects(repo)


def test_the_racers_copy_removed_with_a_rejection_of_the_authors_plan_gives_her_nothing(
    repo: Path,
) -> None:
    """One commit of Mallory's removes her raced copy and sets Dave's plan (the same
    content) ``rejected``: the controller pairs the two as a move of her copy onto his path,
    which brings nothing of hers where his folder has its own originators: her rejection
    is ignored, and Dave keeps his withdrawal."""
    _raced(repo, "first")
    _git(repo, "rm", "-q", "-r", "plans/greet-m")
    edit_status(repo, "greet", "rejected")
    _commit(repo, "mallory: her copy gone, his plan rejected", MALLORY)
    row = _row(repo)
    assert "E_APPROVER_NOT_ALLOWED" in _notes(row), row
    edit_status(repo, "greet", "pending_approval")
    _commit(repo, "dave: back to pending", DAVE)
    _reject(repo, DAVE)
    row = _row(repo)
    assert row.get("status") == "rejected", row
    approve(repo, who=BOB)
    _row(repo)
    assert not _own_starts(repo), subjects(repo)
