"""An edit taken back by ``git revert`` after the controller froze it leaves its maker nothing
(round 126, atk126a, ``undone-edit-gives-withdrawal``; round 20 for a plan at a gate).

Mallory (no approver) edits the agent's pending plan, a pass freezes her v2, and she
``git revert``s HER EDIT commit (the agent's v1 again, under the controller's freeze block of
v2), then sets it ``rejected``, in the same round or after another pass: the version at
stake came from none of hers, so her rejection is ``E_APPROVER_NOT_ALLOWED`` and Bob's
approval runs the agent's plan; ``check --as`` and the fresh-clone audit agree.

What atk126a's lab did instead: its ``git revert --no-edit HEAD`` after the pass reverted the
controller's freeze commit (or another variant's commit), so the plan still held Mallory's
v2, whose author she is: her rejection withdraws it (round 119: an editor is an author of the
version she made). That direction is kept here as the control."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.service.reconcile import Controller
from controller.settings import config_from_data
from tests.support.gitenv import identity, run_cli
from tests.support.gitkit import AGENT, edit_status, git, subjects, write_plan

MALLORY = ("Mallory", "mallory@example.com")
BOB = ("Bob", "bob@ops.example.com")


def _config(repo: Path) -> Path:
    data = {
        "repo": str(repo),
        "state_dir": str(repo.parent / "state"),
        "approval": {"approvers": ["alice@example.com", "*@ops.example.com"]},
        "tools": {"greet": {"kind": "echo"}},
    }
    path = repo.parent / "plangate.json"
    path.write_text(json.dumps(data))
    return path


def _row(repo: Path) -> dict[str, Any]:
    """One controller pass, then the status row of ``plans/greet`` (with its notes)."""
    path = _config(repo)
    ctl = Controller(config_from_data(json.loads(path.read_text()), path))
    try:
        ctl.run_once()
        rows = {str(r["plan"]): r for r in ctl.status(reasons=True)}
    finally:
        ctl.close()
    return rows.get("plans/greet", {})


def _commit(repo: Path, msg: str, who: tuple[str, str]) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", msg, env=identity(*who))
    return git(repo, "rev-parse", "HEAD").strip()


def _set(repo: Path, status: str, who: tuple[str, str]) -> str:
    edit_status(repo, "greet", status)
    return _commit(repo, f"{status} greet", who)


def _edit(repo: Path, who: tuple[str, str]) -> str:
    """``who`` changes the greeting's param in the plan file as it is (frozen block kept)."""
    path = repo / "plans" / "greet" / "PLAN.yml"
    text = path.read_text()
    assert "world   # trailing" in text
    path.write_text(text.replace("world   # trailing", "there   # trailing"))
    return _commit(repo, "edit greet", who)


def _mallorys_frozen_edit(repo: Path) -> str:
    """The agent's plan frozen, then Mallory's edit of it frozen: her edit's sha."""
    write_plan(repo)
    _commit(repo, "agent: greet", AGENT)
    _row(repo)
    edit = _edit(repo, MALLORY)
    assert "frozen" in (repo / "plans" / "greet" / "PLAN.yml").read_text()
    _row(repo)
    assert git(repo, "log", "-1", "--format=%s").startswith("plangate: freeze")  # v2
    return edit


def _check_as(repo: Path, who: tuple[str, str]) -> Any:
    """``plangate check --as`` of Bob's approval on a branch, before main takes it."""
    git(repo, "checkout", "-q", "-b", "ap")
    _set(repo, "approved", who)
    done = run_cli(
        "check", "--config", str(_config(repo)), "--base", "main", "--head", "ap",
        "--as", who[1], "--format", "json", cwd=repo,
    )  # fmt: skip
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "ap")
    plans = {p["plan"]: p for p in json.loads(done.stdout)["plans"]}
    return plans.get("plans/greet", {}).get("outcome")


def _audit_valid(repo: Path) -> int:
    """Valid starts of ``plans/greet`` in the audit of a fresh clone (no config)."""
    clone = repo.parent / "clone"
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    done = run_cli("audit", "--json", cwd=clone)
    assert done.returncode in (0, 1), done.stderr
    runs = json.loads(done.stdout).get("executions", [])
    return len([e for e in runs if e.get("plan") == "plans/greet" and e.get("approval_valid")])


def _starts(repo: Path) -> int:
    return len([s for s in subjects(repo) if s.startswith("plangate: start plans/greet")])


def _her_rejection_ignored_and_bob_runs_it(repo: Path) -> None:
    row = _row(repo)
    notes = " ".join(map(str, row.get("notes") or []))
    assert row.get("status") == "pending_approval", row
    assert "E_APPROVER_NOT_ALLOWED" in notes and "mallory@example.com" in notes, notes
    assert _check_as(repo, BOB) == "start"
    _row(repo)
    assert _row(repo).get("status") == "completed"
    assert _starts(repo) == 1
    assert _audit_valid(repo) == 1


@pytest.mark.parametrize("pass_between", [False, True], ids=["same-round", "pass-between"])
def test_her_frozen_edit_reverted_gives_her_no_withdrawal(repo: Path, pass_between: bool) -> None:
    """``git revert <her edit>`` after the freeze of her v2: the agent's v1 again."""
    edit = _mallorys_frozen_edit(repo)
    git(repo, "revert", "--no-edit", edit, env=identity(*MALLORY))
    assert "there" not in (repo / "plans" / "greet" / "PLAN.yml").read_text()
    if pass_between:
        _row(repo)
    _set(repo, "rejected", MALLORY)
    _her_rejection_ignored_and_bob_runs_it(repo)


def test_her_frozen_edit_restored_by_hand_gives_her_no_withdrawal(repo: Path) -> None:
    """The same with her edit taken back by hand (the frozen block of v2 kept), her
    rejection in the same push."""
    _mallorys_frozen_edit(repo)
    path = repo / "plans" / "greet" / "PLAN.yml"
    path.write_text(path.read_text().replace("there   # trailing", "world   # trailing"))
    _commit(repo, "mallory: undo", MALLORY)
    _set(repo, "rejected", MALLORY)
    _her_rejection_ignored_and_bob_runs_it(repo)


def test_a_new_version_under_an_ignored_rejection_is_frozen(repo: Path) -> None:
    """The next variant: the agent edits its frozen plan and Mallory rejects it in the same
    push. Her rejection is ignored; the agent's new version is frozen in that pass (its
    status back to ``pending_approval``), so Bob's first approval runs it."""
    write_plan(repo)
    _commit(repo, "agent: greet", AGENT)
    _row(repo)
    _edit(repo, AGENT)
    _set(repo, "rejected", MALLORY)
    row = _row(repo)
    assert row.get("status") == "pending_approval", row
    assert git(repo, "log", "-1", "--format=%s").startswith("plangate: freeze")
    assert "status: pending_approval" in (repo / "plans" / "greet" / "PLAN.yml").read_text()
    _her_rejection_ignored_and_bob_runs_it(repo)


def test_an_ignored_rejection_of_a_frozen_version_writes_nothing(repo: Path) -> None:
    """Control: with the version frozen already, the controller commits nothing for her
    ignored rejection (the file keeps what she wrote); Bob's approval runs the plan."""
    write_plan(repo)
    _commit(repo, "agent: greet", AGENT)
    _row(repo)
    rejected = _set(repo, "rejected", MALLORY)
    _row(repo)
    assert git(repo, "rev-parse", "HEAD").strip() == rejected
    _her_rejection_ignored_and_bob_runs_it(repo)


def test_the_freeze_reverted_leaves_her_version_hers(repo: Path) -> None:
    """Control (atk126a's lab): she reverts the controller's FREEZE commit; the plan still
    holds her v2, so she is its author and her rejection withdraws it, for good."""
    _mallorys_frozen_edit(repo)
    git(repo, "revert", "--no-edit", "HEAD", env=identity(*MALLORY))
    assert "there" in (repo / "plans" / "greet" / "PLAN.yml").read_text()
    _set(repo, "rejected", MALLORY)
    assert _row(repo).get("status") == "rejected"
    assert _check_as(repo, BOB) != "start"
    assert _row(repo).get("status") == "rejected"
    assert _starts(repo) == 0
    assert _audit_valid(repo) == 0
