"""An allowed approver's rejection counts however an ordinary forge flow brings it (round 117,
atk117a): the forge's rebase-merge of a pull request's review, an approver's ``git am`` of
her emailed rejection, the forge's squash of a pull request that adds a plan with its
rejection. Rounds 108-109 read each as a copy of an earlier decision (written before the
version's birth or in its second, put on the branch by another hand; or a plan first seen
``rejected``) and ignored it; Bob's approval then ran the plan. Withdrawals fail closed."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from controller.service.reconcile import Controller
from controller.settings import config_from_data
from tests.support.gitenv import run_cli
from tests.support.gitkit import AGENT, PLAN, approve, edit_status, head_plan, subjects, write_plan

OWNER = ("Owner", "owner@example.com")
BOB = ("Bob", "bob@ops.example.com")
CAROL = ("Carol", "carol@ops.example.com")
FORGE = ("GitHub", "noreply@github.com")


def _config(repo: Path) -> Any:
    data = {
        "repo": str(repo),
        "state_dir": str(repo.parent / "state"),
        "approval": {"approvers": ["alice@example.com", "*@ops.example.com"]},
        "tools": {"greet": {"kind": "echo"}},
    }
    return config_from_data(data, repo.parent / "plangate.yml")


def _row(repo: Path) -> dict[str, Any]:
    """One controller pass, then the status row of ``plans/greet`` (with its notes)."""
    ctl = Controller(_config(repo))
    try:
        ctl.run_once()
        rows = {str(r["plan"]): r for r in ctl.status(reasons=True)}
    finally:
        ctl.close()
    return rows.get("plans/greet", {})


def _git(
    repo: Path,
    *args: str,
    who: tuple[str, str] = AGENT,
    by: tuple[str, str] | None = None,
    when: int | None = None,
    input: str | None = None,
) -> str:
    """git as ``who`` (author), committed by ``by`` (default ``who``), author date ``when``."""
    committer = by or who
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": committer[0],
        "GIT_COMMITTER_EMAIL": committer[1],
    }
    if when is not None:
        env["GIT_AUTHOR_DATE"] = f"@{when} +0000"
    result = subprocess.run(
        ["git", *args], cwd=repo, env=env, input=input, capture_output=True, text=True, check=True
    )
    return result.stdout


def _commit(repo: Path, msg: str, who: tuple[str, str], when: int | None = None) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", msg, who=who, when=when)
    return _git(repo, "rev-parse", "HEAD").strip()


def _controller_time(repo: Path) -> int:
    return int(_git(repo, "log", "-1", "--format=%ct", "--author=plangate@localhost").strip())


def _other_plan_frozen(repo: Path) -> None:
    """A plan of the Owner's frozen on main: a controller commit newer than the review."""
    write_plan(repo, "other", PLAN.replace("world   # trailing", "there   # trailing"))
    _commit(repo, "owner: other", OWNER)
    _row(repo)


def _pull_request(repo: Path) -> tuple[str, str]:
    """The agent's pull request adding ``greet`` (an hour ago) and Carol's review on it,
    ``status: rejected`` (half an hour ago): the two commits."""
    now = int(time.time())
    _git(repo, "checkout", "-q", "-b", "pr-greet")
    write_plan(repo)
    added = _commit(repo, "agent: add greet", AGENT, now - 3600)
    edit_status(repo, "greet", "rejected")
    rejected = _commit(repo, "carol: not this", CAROL, now - 1800)
    _git(repo, "checkout", "-q", "main")
    return added, rejected


def _clone_audit(repo: Path) -> dict[str, Any]:
    """``plangate audit --json`` in a fresh clone, no configuration (history alone)."""
    clone = repo.parent / "clone"
    _git(repo.parent, "clone", "-q", str(repo), str(clone))
    result = run_cli("audit", "--json", cwd=clone)
    assert result.returncode in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _withdrawn_and_held(repo: Path, by: str = CAROL[1]) -> None:
    """What a user relies on after Carol's rejection: Bob's approvals (twice: the first may
    be refused for a plan that is not yet frozen) run nothing, the status row says
    ``rejected`` and names the withdrawal's maker ``by``, and the fresh-clone audit lists it
    under ``decisions``, flags no ``withdraw-not-allowed`` and calls no run of the plan
    valid."""
    row = _row(repo)
    assert row.get("status") == "rejected", row
    for _ in range(2):
        approve(repo, who=BOB)
        row = _row(repo)
    assert row.get("status") == "rejected", row
    assert "execution" not in head_plan(repo)
    assert not [s for s in subjects(repo) if s.startswith("plangate: start plans/greet")]
    notes = " ".join(map(str, row.get("notes") or []))
    assert "E_APPROVAL_REPLAYED" not in notes and "from nothing" not in notes, notes
    assert f"{by} set status rejected" in notes, notes
    report = _clone_audit(repo)
    mine = [d for d in report.get("decisions", []) if d.get("plan") == "plans/greet"]
    assert [d.get("kind") for d in mine] == ["reject"], report.get("decisions")
    assert mine[0].get("by") == by, mine
    flagged = [
        f
        for f in report.get("findings", [])
        if f.get("plan") == "plans/greet" and f.get("kind") == "withdraw-not-allowed"
    ]
    assert not flagged, flagged
    valid = [
        e
        for e in report.get("executions", [])
        if e.get("plan") == "plans/greet" and e.get("approval_valid")
    ]
    assert not valid, valid


def test_a_review_rejection_rebase_merged_by_the_forge_withdraws(repo: Path) -> None:
    """(pr-withdrawal-older-than-line-birth) Carol rejected the plan on the pull request
    before a controller commit on main; the forge's "rebase and merge" re-creates both
    commits (committer the forge, author dates kept): her rejection is of this content."""
    added, rejected = _pull_request(repo)
    _other_plan_frozen(repo)
    for sha in (added, rejected):
        _git(repo, "cherry-pick", sha, who=FORGE)
    made = _git(repo, "log", "-1", "--format=%ae %ce %at").split()
    assert made[:2] == [CAROL[1], FORGE[1]] and int(made[2]) < _controller_time(repo), made
    _withdrawn_and_held(repo)


def test_a_rejection_in_the_freezes_second_applied_with_git_am_withdraws(repo: Path) -> None:
    """(same-second-withdrawal-by-another-hand) Carol's emailed rejection, written in the
    second the controller froze the plan, applied by Bob with ``git am``."""
    write_plan(repo)
    _commit(repo, "owner: greet", OWNER)
    _row(repo)
    frozen = _controller_time(repo)
    _git(repo, "checkout", "-q", "-b", "carol")
    edit_status(repo, "greet", "rejected")
    hers = _commit(repo, "carol: not this", CAROL, frozen)
    patch = _git(repo, "format-patch", "-1", "--stdout", hers)
    _git(repo, "checkout", "-q", "main")
    _git(repo, "am", "-q", "--3way", who=BOB, input=patch)
    made = _git(repo, "log", "-1", "--format=%ae %ce %at").split()
    assert made == [CAROL[1], BOB[1], str(frozen)], made
    _withdrawn_and_held(repo)


def test_a_pull_request_squashed_with_its_rejection_adds_a_rejected_plan(repo: Path) -> None:
    """(squash-added-rejected-plan-revived) The forge's "squash and merge" of the pull
    request: the plan first appears ``rejected``, in one commit by its author (who may
    withdraw it). It is rejected, never frozen and approved later."""
    _pull_request(repo)
    _other_plan_frozen(repo)
    _git(repo, "merge", "-q", "--squash", "pr-greet", who=FORGE)
    msg = f"Add greet (#1)\n\nCo-authored-by: {CAROL[0]} <{CAROL[1]}>\n"
    _git(repo, "commit", "-q", "-m", msg, who=AGENT, by=FORGE)
    _withdrawn_and_held(repo, by=AGENT[1])  # the commit's author made it (SPEC §5)
