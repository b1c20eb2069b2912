"""Round 49, who may withdraw a version while a quorum collects (``rules: [{match: {paths:
[plans/w/**]}, require: [{count: 2}]}]``). Each plan ``plans/w/<vid>`` is the agent's; the
controller freezes; Alice approves (``partial``); then:

- ``mallory``: Mallory (no approver, no writer) sets ``rejected`` on main; Bob approves.
- ``mallory-branch``: Mallory's ``rejected`` commit inside a branch that the agent sets back
  to ``pending_approval``; Carol merges it (``--no-ff``); Bob approves.
- ``voter``: Alice (who voted) sets ``rejected``; Bob approves.
- ``voter-branch``: Alice's ``rejected`` inside a branch set back to ``pending_approval`` by
  the agent, merged by Mallory; Bob approves.

Asserted (the defence): one who may not withdraw (Mallory) vetoes nothing: the plan runs
once after Bob's vote; an approver's withdrawal (Alice, on main or in a merged branch)
holds: ``rec`` never ran and the controller keeps the plan ``rejected`` (Bob's later
``approved`` is ``E_ILLEGAL_TRANSITION ... ignored``) or refuses ``E_VERSION_WITHDRAWN``.

Seen: all held (Mallory's rejections ignored, both plans ran once after Bob's vote; Alice's
rejections, on main and inside the branch Mallory merged, kept the plans ``rejected``); the
audit lists the same two runs and two rejections.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

RUNS = ["mallory", "mallory-branch"]
VETOED = ["voter", "voter-branch"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(
        root, approval="rules:\n  - {match: {paths: ['plans/w/**']}, require: [{count: 2}]}\n"
    )
    for vid in RUNS + VETOED:
        lab.write(f"w/{vid}", plan_text(vid))
    lab.commit("agent adds plans")
    lab.run()
    for vid in RUNS + VETOED:
        lab.set_status(f"w/{vid}", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.set_status("w/mallory", "rejected")
    lab.commit("mallory rejects", MALLORY)
    lab.set_status("w/voter", "rejected")
    lab.commit("alice rejects", ALICE)
    for vid, who, merger in [("mallory-branch", MALLORY, CAROL), ("voter-branch", ALICE, MALLORY)]:
        lab.git("checkout", "-q", "-b", f"pr-{vid}")
        lab.set_status(f"w/{vid}", "rejected")
        lab.commit(f"{who[0]} rejects", who)
        lab.set_status(f"w/{vid}", "pending_approval")
        lab.commit("agent sets it back", AGENT)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=merger)
    lab.run()
    for vid in RUNS + VETOED:
        lab.set_status(f"w/{vid}", "approved")
    lab.commit("bob approves", BOB)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-quorumwithdraw", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in RUNS]
)
def test_a_non_approver_vetoes_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(f"w/{vid}")


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in VETOED]
)
def test_an_approvers_withdrawal_holds(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"w/{vid}")
    row = lab.status()[f"plans/w/{vid}"]
    assert row["status"] == "rejected" or "E_VERSION_WITHDRAWN" in lab.codes(f"w/{vid}"), row


def test_the_audit_agrees(lab: Lab) -> None:
    """``plangate audit`` (recorded policy, no config) lists the same runs and rejections."""
    _code, report = lab.audit()
    runs = sorted(str(e.get("plan")) for e in report.get("executions", []))
    assert runs == sorted(f"plans/w/{v}" for v in RUNS), report
    rejects = sorted(str(d.get("plan")) for d in report.get("decisions", []))
    assert rejects == sorted(f"plans/w/{v}" for v in VETOED), report
