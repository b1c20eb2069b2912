"""``status`` shows the risk the controller decides by, never the ``frozen:`` block an agent
wrote (round 114, atk114a ``status-risk-from-forged-frozen``): the row showed ``low`` from a
forged ``frozen.risk`` while the controller judged the plan by its catalog risk."""

from __future__ import annotations

from pathlib import Path

from controller.plan import yamlio
from tests.support.gitenv import AGENT, commit_all
from tests.support.gitkit import controller, head_plan, submitted, write_plan


def _forge_risk(repo: Path, risk: object) -> None:
    path = repo / "plans" / "greet" / "PLAN.yml"
    doc = yamlio.read_yaml(path.read_text())
    path.write_text(yamlio.set_scalar(doc, ("frozen", "risk"), risk))


def _row_risk(repo: Path) -> object:
    with controller(repo) as ctl:
        return {row["plan"]: row for row in ctl.status()}["plans/greet"]["risk"]


def test_a_risk_the_agent_forges_after_the_freeze_is_not_shown(repo: Path) -> None:
    submitted(repo)
    judged = head_plan(repo)["frozen"]["risk"]
    assert judged != "low"
    assert _row_risk(repo) == judged
    _forge_risk(repo, "low")
    commit_all(repo, "agent: tidy", AGENT)
    assert head_plan(repo)["frozen"]["risk"] == "low"
    assert _row_risk(repo) == judged


def test_a_plan_that_arrives_frozen_by_the_agent_shows_the_judged_risk(repo: Path) -> None:
    write_plan(repo)
    commit_all(repo, "agent: plan", AGENT)
    submitted_text = None
    with controller(repo) as ctl:  # the controller's freeze, to learn what it writes
        ctl.reconcile()
    judged = head_plan(repo)["frozen"]["risk"]
    submitted_text = (repo / "plans" / "greet" / "PLAN.yml").read_text()
    # the same frozen text, as the agent's own commit under a new name, its risk forged
    (repo / "plans" / "copy").mkdir()
    forged = submitted_text.replace(f"risk: {judged}", "risk: low")
    assert forged != submitted_text
    (repo / "plans" / "copy" / "PLAN.yml").write_text(forged)
    commit_all(repo, "agent: a plan frozen by itself", AGENT)
    with controller(repo) as ctl:
        rows = {row["plan"]: row for row in ctl.status()}
    assert rows["plans/copy"]["risk"] == judged, rows["plans/copy"]


def test_a_frozen_block_the_agent_broke_is_said_on_the_row(repo: Path) -> None:
    """A ``frozen:`` block made invalid after the freeze (``risk: none``) cannot be approved
    (``E_PLAN_NOT_FROZEN``): the row says so before anyone approves, naming the field and the
    way back (round 114, ``status-row-silent-on-forged-frozen``: it said only "waiting")."""
    submitted(repo)
    with controller(repo) as ctl:
        assert {r["plan"]: r for r in ctl.status()}["plans/greet"]["waiting"] is None
    _forge_risk(repo, "none")
    commit_all(repo, "agent: tidy", AGENT)
    with controller(repo) as ctl:
        row = {r["plan"]: r for r in ctl.status()}["plans/greet"]
    assert row["status"] == "pending_approval", row
    assert str(row["waiting"]).startswith("E_SCHEMA_INVALID at frozen.risk: "), row
    assert "E_PLAN_NOT_FROZEN" in row["waiting"] and "git checkout " in row["waiting"]
    _forge_risk(repo, "low")  # valid again (the judged risk is shown, as above)
    commit_all(repo, "agent: tidy again", AGENT)
    with controller(repo) as ctl:
        assert {r["plan"]: r for r in ctl.status()}["plans/greet"]["waiting"] is None
