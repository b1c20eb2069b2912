"""Round 44, quorum: a collected vote versus its plan deleted (or moved away) and brought back.

docs/approvals.md (Quorum, Voiding): "Any change to the hashed content voids them: the plan
is frozen again and collection starts from zero"; (A rewritten branch) a plan "deleted
(added again under its name it is a new plan, frozen anew)"; round 22 held that a vote is
bound to its plan (a move or a twin does not carry it).

Config: the bench's, plus ``plans/two/**`` needs two approvals. The agent writes each plan
``plans/two/<vid>``; the controller freezes it; Alice approves (``partial``: her vote is
collected). Then the agent:

- ``del-readd``: ``git rm``s the plan (a pass), then adds the same plan text again (no
  ``frozen:`` block: the controller freezes it anew, a pass);
- ``del-readd-nopass``: the same two commits with no pass between;
- ``mv-back``: ``git mv``s the folder to ``plans/two/<vid>-x`` (a pass), then back (a pass);
- ``mv-back-nopass``: the same two moves with no pass between;
- ``ctl``: nothing (control: Bob's approval makes the quorum, it runs once).

Then Bob approves on main; a fresh clone is audited.

Asserted (the defence): where the plan was deleted or moved away and came back, Alice's
vote is gone with the plan: Bob's approval leaves it ``partial`` and ``rec`` never runs; the
control runs once; the fresh-clone audit agrees with the controller (one valid execution
exactly where the controller started the plan).

Seen: all held (each came back ``partial`` with Bob's vote only; the audit agreed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
BACK = ["del-readd", "del-readd-nopass", "mv-back", "mv-back-nopass"]
ALL = [*BACK, "ctl"]

#: what round 44 broke (strict xfails)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in ALL:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in ALL:
        lab.approve(f"two/{vid}", ALICE)
    lab.run()  # partial
    time.sleep(1.05)
    for vid in ["del-readd", "del-readd-nopass"]:
        lab.git("rm", "-q", "-r", f"plans/two/{vid}")
    lab.git("mv", "plans/two/mv-back", "plans/two/mv-back-x")
    lab.git("mv", "plans/two/mv-back-nopass", "plans/two/mv-back-nopass-x")
    lab.commit("agent removes / moves away", AGENT)
    lab.write("two/del-readd-nopass", plan_text("del-readd-nopass"))
    lab.git("mv", "plans/two/mv-back-nopass-x", "plans/two/mv-back-nopass")
    lab.commit("agent brings back (no pass)", AGENT)
    lab.run()
    time.sleep(1.05)
    lab.write("two/del-readd", plan_text("del-readd"))
    lab.git("mv", "plans/two/mv-back-x", "plans/two/mv-back")
    lab.commit("agent brings back", AGENT)
    lab.run()  # freeze anew
    time.sleep(1.05)
    for vid in ALL:
        st = lab.plan(f"two/{vid}")["plan"]["status"]
        if st != "pending_approval":
            lab.set_status(f"two/{vid}", "pending_approval")
            lab.commit(f"agent resubmits {vid}", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in ALL:
        lab.approve(f"two/{vid}", BOB)
    lab.run()
    lab.run()
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = (  # type: ignore[attr-defined]
        json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r44-votereadd", _build)


def _p(vids: list[str], prefix: str = "") -> list[object]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("two/ctl")


@pytest.mark.parametrize("vid", _p(BACK))
def test_a_vote_does_not_come_back_with_the_plan(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"two/{vid}")
    assert not lab.started(f"two/{vid}"), lab.codes(f"two/{vid}")
    approval = lab.plan(f"two/{vid}").get("approval") or {}
    assert approval.get("status") == "partial", lab.codes(f"two/{vid}")


@pytest.mark.parametrize("vid", _p(ALL, "audit-"))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/two/{vid}"]
    assert len(runs) == int(lab.started(f"two/{vid}")), report
    assert all(e.get("approval_valid") for e in runs), runs
