"""The status row of a version someone entitled withdrew says so before anyone approves it
(round 119, withdrawn-version-copy-shown-waiting): a frozen copy at another slug of the
version Alice rejected read ``pending_approval``, "waiting for an approval", with no
E_VERSION_WITHDRAWN, until an approval was refused with that code, while MCP ``submit``
refused the same copy at once (round 118). The row's status stays ``pending_approval``;
its ``waiting`` and ``reason`` name the withdrawal (the plan, the commit and who), in
``status``, MCP ``status`` (the one plan's row) and the page alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.gitenv import commit_all, run_cli
from tests.support.gitkit import AGENT, ALICE, PLAN, controller, edit_status, write_plan


def _rejected_then_copied(repo: Path, text: str = PLAN) -> str:
    """The agent's plan ``greet``, frozen; Alice's rejection; the agent's ``greet-2`` with
    ``text``, frozen by a pass. The rejection's commit."""
    write_plan(repo)
    commit_all(repo, "agent: greet", AGENT)
    with controller(repo) as ctl:
        ctl.run_once()
    edit_status(repo, "greet", "rejected")
    rejection = commit_all(repo, "alice: not this", ALICE)
    write_plan(repo, "greet-2", text)
    commit_all(repo, "agent: greet again", AGENT)
    with controller(repo) as ctl:
        ctl.run_once()
    return rejection


def _copy_rows(repo: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The copy's row in ``status`` (every plan, with reasons) and as MCP ``status`` reads
    one plan (:meth:`Controller.status` with ``plan``)."""
    with controller(repo) as ctl:
        rows = {str(r["plan"]): r for r in ctl.status(reasons=True)}
        one = ctl.status(plan="plans/greet-2")
    return rows["plans/greet-2"], one[0]


def test_a_copy_of_a_rejected_version_says_it_is_withdrawn(repo: Path, tmp_path: Path) -> None:
    rejection = _rejected_then_copied(repo)
    row, one = _copy_rows(repo)
    assert row["status"] == one["status"] == "pending_approval", row
    for said in (row["waiting"], row["reason"], one["waiting"]):
        assert str(said).startswith("E_VERSION_WITHDRAWN: "), row
        assert "plans/greet " in said and rejection[:12] in said and ALICE[1] in said, said
    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n")
    shown = run_cli("status", "--config", str(config), cwd=repo).stdout
    assert "waiting: E_VERSION_WITHDRAWN" in shown, shown


def test_a_changed_version_waits_as_any_other(repo: Path) -> None:
    """Control: the agent changed what Alice objected to (a new hash): a new version,
    waiting for an approval, nothing withdrawn."""
    _rejected_then_copied(repo, PLAN.replace("Say hello to the world", "Say hi to the world"))
    row, one = _copy_rows(repo)
    assert row["status"] == "pending_approval", row
    assert "E_VERSION_WITHDRAWN" not in f"{row['waiting']} {row['reason']} {one['waiting']}"
