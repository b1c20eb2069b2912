"""Round 35, who may reject: a removed approver's rejection made on a branch forked from
history older than her removal.

docs/approvals.md: "Who may reject or abort is judged by the policy the controller had
recorded when the withdrawal was made (``.plangate/policy.json`` in the withdrawal's
first-parent history), not by today's config: ... one by someone added later still
withdraws nothing". A withdrawal inside a merged branch "is handled as if made on the branch
itself".

Mallory is an approver when the controller records its first policy; the operator then
removes her (the controller records the new policy). The agent adds plans afterwards:

- ``fork-merge``: Mallory forks a branch from the commit of the first recorded policy,
  merges main into it (main is the *second* parent), sets ``plans/fork-merge`` rejected
  there; the repository's owner (no approver, no author) merges her branch into main
  (``--no-ff``); Alice approves the plan.
- ``main``: Mallory rejects ``plans/main`` on main itself (control: she is no approver
  now); Alice approves.

Asserted: her rejection withdraws nothing: Alice's approval runs each plan exactly once;
the fresh-clone audit lists no decision of hers.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

#: merges the branch: no approver, no author of any plan (the agent, a producer, may
#: withdraw: a merge bringing a rejection is then the merger's, round 24's accepted limit)
OWNER = ("Owner", "owner@example.com")

VIDS = ["fork-merge", "main"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _approvers(lab: Lab, old: str, new: str) -> None:
    text = lab.config.read_text()
    assert old in text, text
    lab.config.write_text(text.replace(old, new, 1))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    _approvers(lab, '"*@ops.example.com"]', '"*@ops.example.com", "mallory@example.com"]')
    lab.run()
    old = lab.head()
    assert lab.git("log", "-1", "--format=%ae", old).strip() == "plangate@localhost"
    _approvers(lab, ', "mallory@example.com"]', "]")
    lab.run()
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.05)
    lab.git("checkout", "-q", "-b", "m1", old)
    lab.git("merge", "-q", "--no-ff", "-m", "sync main", "main", who=MALLORY)
    lab.set_status("fork-merge", "rejected")
    lab.commit("mallory rejects fork-merge", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge m1", "m1", who=OWNER)
    lab.set_status("main", "rejected")
    lab.commit("mallory rejects main", MALLORY)
    lab.run()
    for vid in VIDS:
        path = lab.repo / "plans" / vid / "PLAN.yml"
        path.write_text(path.read_text().replace("status: rejected", "status: pending_approval"))
        lab.set_status(vid, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-oldfork", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in VIDS]
)
def test_a_removed_approver_withdraws_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


def test_the_audit_agrees(lab: Lab) -> None:
    _, report = lab.audit()
    decisions = [d["plan"] for d in report.get("decisions", []) if d["by"] == MALLORY[1]]
    assert decisions == [], report.get("decisions")
