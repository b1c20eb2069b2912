"""A plan's author may withdraw it whoever else made its content too (round 119, atk119w,
``author-withdrawal-lost-to-another-copy`` and ``plan-author-loses-withdrawal-to-coeditor``).

SPEC §4: a rejection or an abort counts from an allowed approver or an author of the plan.
Who may withdraw as an author was read from the version's producers, the people in EVERY
commit that made that content anywhere: anyone's copy of the plan at another slug, a revert
back to it or a re-add of it emptied the set, and a co-author's edit made the version hers
alone. Dave's (or the agent's) rejection of his own plan was then ``E_APPROVER_NOT_ALLOWED``
and Bob's approval ran it. A plan's authors are now the originators of the version at stake
and of the versions it was edited from (a making on top of one counted removes nobody); the
veto by hash everywhere stays the producers' (rounds 16, 23), and a mover, a racer or an
editor whose edit was taken back still gains nothing (rounds 34, 35, 20)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from controller.service.reconcile import Controller
from controller.settings import config_from_data
from tests.support.gitenv import run_cli
from tests.support.gitkit import AGENT, PLAN, approve, edit_status, subjects, write_plan

DAVE = ("Dave", "dave@example.com")  # a human plan author, no approver
MALLORY = ("Mallory", "mallory@example.com")
BOB = ("Bob", "bob@ops.example.com")
V2 = PLAN.replace("world   # trailing", "there   # trailing")


def _row(repo: Path, slug: str = "greet") -> dict[str, Any]:
    """One controller pass, then the status row of ``plans/<slug>`` (with its notes)."""
    data = {
        "repo": str(repo),
        "state_dir": str(repo.parent / "state"),
        "approval": {"approvers": ["alice@example.com", "*@ops.example.com"]},
        "tools": {"greet": {"kind": "echo"}},
    }
    ctl = Controller(config_from_data(data, repo.parent / "plangate.yml"))
    try:
        ctl.run_once()
        rows = {str(r["plan"]): r for r in ctl.status(reasons=True)}
    finally:
        ctl.close()
    return rows.get(f"plans/{slug}", {})


def _git(repo: Path, *args: str, who: tuple[str, str] = AGENT) -> str:
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


def _audit(repo: Path) -> dict[str, Any]:
    clone = repo.parent / "clone"
    _git(repo.parent, "clone", "-q", str(repo), str(clone))
    result = run_cli("audit", "--json", cwd=clone)
    assert result.returncode in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _withdrawn(repo: Path, by: str) -> None:
    """Bob's approvals (twice) run nothing; the row says ``rejected``; the fresh-clone audit
    lists ``by``'s rejection and flags no ``withdraw-not-allowed``."""
    row = _row(repo)
    assert row.get("status") == "rejected", row
    for _ in range(2):
        approve(repo, who=BOB)
        row = _row(repo)
    assert row.get("status") == "rejected", row
    assert not [s for s in subjects(repo) if s.startswith("plangate: start plans/greet")]
    notes = " ".join(map(str, row.get("notes") or []))
    assert "E_APPROVER_NOT_ALLOWED" not in notes, notes
    report = _audit(repo)
    mine = [d for d in report.get("decisions", []) if d.get("plan") == "plans/greet"]
    assert [(d.get("kind"), d.get("by")) for d in mine] == [("reject", by)], mine
    flagged = [f for f in report.get("findings", []) if f.get("kind") == "withdraw-not-allowed"]
    assert not flagged, flagged


def _ran_once(repo: Path) -> None:
    """Bob's approval runs the plan once: a non-author's withdrawal was ignored."""
    approve(repo, who=BOB)
    _row(repo)
    _row(repo)
    starts = [s for s in subjects(repo) if s.startswith("plangate: start plans/greet")]
    assert len(starts) == 1, subjects(repo)


def _daves_plan(repo: Path) -> None:
    write_plan(repo)
    _commit(repo, "dave: greet", DAVE)
    _row(repo)


def test_a_copy_at_another_slug_leaves_the_author_his_withdrawal(repo: Path) -> None:
    """The agent copies Dave's plan to ``plans/greet-2``; Dave rejects his own plan."""
    _daves_plan(repo)
    write_plan(repo, "greet-2")
    _commit(repo, "agent: a copy", AGENT)
    _reject(repo, DAVE)
    _withdrawn(repo, DAVE[1])


def test_a_copy_merged_from_a_branch_leaves_the_author_his_withdrawal(repo: Path) -> None:
    """The copy arrives on a branch forked after Dave's plan (a re-making on top of it)."""
    _daves_plan(repo)
    _git(repo, "checkout", "-q", "-b", "copy")
    write_plan(repo, "greet-2")
    _commit(repo, "agent: a copy", AGENT)
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--no-ff", "-m", "merge copy", "copy", who=BOB)
    _reject(repo, DAVE)
    _withdrawn(repo, DAVE[1])


def test_a_revert_back_leaves_the_author_his_withdrawal(repo: Path) -> None:
    """Dave's v1, his v2; Mallory reverts to v1; Dave rejects v1."""
    _daves_plan(repo)
    write_plan(repo, text=V2)
    v2 = _commit(repo, "dave: v2", DAVE)
    _git(repo, "revert", "--no-edit", v2, who=MALLORY)
    _row(repo)
    _reject(repo, DAVE)
    _withdrawn(repo, DAVE[1])


def test_a_re_add_leaves_the_author_his_withdrawal(repo: Path) -> None:
    """The agent deletes Dave's plan, then adds the same text back; Dave rejects it."""
    _daves_plan(repo)
    _git(repo, "rm", "-q", "-r", "plans/greet")
    _commit(repo, "agent: drop greet", AGENT)
    write_plan(repo)
    _commit(repo, "agent: bring greet back", AGENT)
    _row(repo)
    _reject(repo, DAVE)
    _withdrawn(repo, DAVE[1])


def test_the_writer_keeps_his_withdrawal_after_a_co_authors_edit(repo: Path) -> None:
    """The agent writes the plan, Dave edits it (v2 frozen), the agent rejects v2."""
    write_plan(repo)
    _commit(repo, "agent: greet", AGENT)
    _row(repo)
    write_plan(repo, text=V2)
    _commit(repo, "dave: v2", DAVE)
    _row(repo)
    _reject(repo, AGENT)
    _withdrawn(repo, AGENT[1])


def test_a_copier_still_vetoes_nothing_and_a_mover_withdraws_nothing(repo: Path) -> None:
    """(b) unchanged: Mallory copies Dave's plan and rejects her copy (round 16: no veto of
    the original's version); she moves it and rejects it there (round 34: a move makes
    nothing). Bob's approval of the moved plan runs it once."""
    _daves_plan(repo)
    write_plan(repo, "greet-m")
    _commit(repo, "mallory: a copy", MALLORY)
    _reject(repo, MALLORY, "greet-m")
    _git(repo, "mv", "plans/greet", "plans/moved")
    _commit(repo, "mallory: a better name", MALLORY)
    _git(repo, "mv", "plans/moved", "plans/greet")
    _commit(repo, "mallory: the old name", MALLORY)
    _reject(repo, MALLORY)
    row = _row(repo)
    assert "E_APPROVER_NOT_ALLOWED" in " ".join(map(str, row.get("notes") or [])), row
    _ran_once(repo)


def test_an_edit_taken_back_gives_no_right_to_withdraw(repo: Path) -> None:
    """(round 20 unchanged) Mallory edits Dave's plan (her v2 frozen), then undoes it: the
    version at stake is Dave's again, edited from none of hers; her rejection is ignored."""
    _daves_plan(repo)
    write_plan(repo, text=V2)
    _commit(repo, "mallory: v2", MALLORY)
    _row(repo)
    write_plan(repo)  # Dave's text back
    _commit(repo, "mallory: undo", MALLORY)
    _row(repo)
    _reject(repo, MALLORY)
    row = _row(repo)
    assert "E_APPROVER_NOT_ALLOWED" in " ".join(map(str, row.get("notes") or [])), row
    _ran_once(repo)
