"""Round 32, who may reject or abort: a withdrawal on a branch forked *before* a policy
change, which brings the plan in by merging main into itself (main is the branch's second
parent, so the branch's first-parent history holds only the old recorded policy).

docs/approvals.md (round 27): a withdrawal is judged by "the policy the controller recorded in
the withdrawal's first-parent history"; a withdrawal inside a merged branch counts only from
someone entitled to withdraw. Config: first ``approvers: [alice, mallory]`` (the controller
records that policy, commit ``old``); then the operator makes it ``[alice, nina]`` (Mallory
left, Nina joined), recorded on the next pass, in which the agent's plans are frozen (the
``*-abort`` plans, action 2 gated, are approved by Alice and pause at the gate). Per variant,
someone forks ``side-<vid>`` from ``old``, merges main into it ``--no-ff`` (so the plan is
there), sets the plan's status there and Carol (no approver, no author) merges the branch
into main ``--no-ff``:

- ``m-rej`` / ``m-abort``: Mallory rejects / aborts (entitled only under the old policy).
- ``n-rej`` / ``n-abort``: Nina rejects / aborts (entitled only under the new policy).
- ``m-self``: as ``m-rej``, Mallory merges her branch herself.

Then Alice approves the plans (and the gates); ``ctl`` is approved only then.

Asserted: Mallory, no longer an approver when she wrote, withdraws nothing (``m-*`` run;
the gate opens); Nina's withdrawal wins (``n-rej`` stays ``rejected``, ``n-abort``'s gated
action never runs); ``ctl`` runs once.

Results: every variant held (the fresh clone's audit also lists Nina's withdrawals under
``decisions`` and flags Mallory's ``withdraw-not-allowed``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, CAROL, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

NINA = ("Nina", "nina@example.com")
GATE = """\
  - id: 2
    tool: rec
    why: "gated"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
WHO = {"m-rej": MALLORY, "m-abort": MALLORY, "m-self": MALLORY, "n-rej": NINA, "n-abort": NINA}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _approvers(lab: Lab, approvers: list[str]) -> None:
    lines = lab.config.read_text().splitlines()
    lines = [
        f"  approvers: {json.dumps(approvers)}" if x.startswith("  approvers:") else x
        for x in lines
    ]
    lab.config.write_text("\n".join(lines) + "\n")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    _approvers(lab, ["alice@example.com", "mallory@example.com"])
    lab.write("first", plan_text("first"))
    lab.commit("agent adds first", AGENT)
    lab.run()
    old = lab.head()
    _approvers(lab, ["alice@example.com", "nina@example.com"])
    for vid in ["m-rej", "n-rej", "m-self", "ctl"]:
        lab.write(vid, plan_text(vid))
    for vid in ["m-abort", "n-abort"]:
        lab.write(vid, plan_text(vid, extra_actions=GATE.format(tag=vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid in ["m-abort", "n-abort"]:
        lab.approve(vid, ALICE)
    lab.run()
    for vid, who in WHO.items():
        status = "aborted" if vid.endswith("abort") else "rejected"
        lab.git("checkout", "-q", "-b", f"side-{vid}", old)
        lab.git("merge", "-q", "--no-ff", "-m", "sync main", "main", who=who)
        lab.set_status(vid, status)
        lab.commit(f"{status} {vid}", who)
        lab.git("checkout", "-q", "main")
        merger = who if vid == "m-self" else CAROL
        lab.git("merge", "-q", "--no-ff", "-m", f"merge side-{vid}", f"side-{vid}", who=merger)
    lab.run()
    for vid in [*WHO, "ctl"]:
        lab.approve(vid, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r32-sidepolicy", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(["m-rej", "m-self", "ctl"]))
def test_a_removed_approver_withdraws_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


def test_a_removed_approver_aborts_nothing(lab: Lab) -> None:
    assert len(lab.calls("m-abort-gated")) == 1, lab.codes("m-abort")


def test_a_new_approvers_rejection_wins(lab: Lab) -> None:
    assert lab.calls("n-rej") == [], lab.codes("n-rej")
    assert lab.status()["plans/n-rej"]["status"] == "rejected", lab.codes("n-rej")


def test_a_new_approvers_abort_wins(lab: Lab) -> None:
    assert lab.calls("n-abort-gated") == [], lab.codes("n-abort")
    assert lab.status()["plans/n-abort"]["status"] == "aborted", lab.codes("n-abort")


def test_the_fresh_clone_audit_agrees(lab: Lab) -> None:
    _, report = lab.audit()
    decided = {(d["plan"], d["by"]) for d in report.get("decisions", [])}
    assert ("plans/n-rej", "nina@example.com") in decided, report.get("decisions")
    flagged = {
        f["plan"] for f in report.get("findings", []) if f["kind"] == "start-without-approval"
    }
    assert not flagged, report.get("findings")
