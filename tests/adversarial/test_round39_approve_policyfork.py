"""Round 39, is a withdrawal inside a merged branch judged by a policy its own history has
already replaced?

docs/approvals.md (rounds 27, 28): a withdrawal is judged by "the policy the controller
recorded in the withdrawal's first-parent history". A side branch's first-parent line can
lead back to a fork made before a policy change, while the branch has since merged the
watched branch (``git merge main`` on the side branch: main, with the new policy's record,
becomes its second parent). git then proves the withdrawal was made after the new policy
was recorded.

Config: the bench's (approvers ``alice@example.com``, ``*@ops.example.com``). The agent
writes each plan; the controller records the policy and freezes them. Branch ``side-synced``
is forked then. The operator narrows ``approval.approvers`` to ``alice@example.com``,
``bob@ops.example.com`` (Carol is no approver any more); the controller records the new
policy (``plangate: record policy``). Then:

- ``pol-fp`` (control): Carol sets ``rejected`` on main.
- ``pol-new``: Carol's rejection on a side branch forked from main after the new record,
  merged with ``-s ours`` by Mallory (no approver, no author: her merge withdraws nothing).
- ``pol-synced``: on ``side-synced`` Carol merges main (first parent: the old fork), then
  sets ``rejected``; Mallory merges it with ``-s ours``.
- ``pol-synced-plain``: the same, merged by Mallory with a plain ``--no-ff`` merge (the
  merge brings ``rejected`` onto main under her name; were the agent to merge it, the
  agent, the plan's author, would withdraw its own plan: allowed).

A pass; then Alice approves each plan (reopened by the agent if it reads ``rejected``); a
pass; a fresh clone is audited.

Asserted (the defence): Carol, no approver under the policy recorded before her commit
(an ancestor of it) and no author, withdraws nothing: each plan runs once on Alice's
approval; the audit reaches the controller's verdict (a withdrawal listed under
``decisions`` exactly when the controller counted it).

Results: all held. (A first attempt merged as the agent: its plain merge that brings
``rejected`` is the author's own withdrawal, which counts by design.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, APPROVERS, CAROL, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["pol-fp", "pol-new", "pol-synced", "pol-synced-plain"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _merge(lab: Lab, branch: str, how: str) -> None:
    args = ["-s", "ours"] if how == "ours" else []
    lab.git("merge", "-q", "--no-ff", *args, "-m", f"merge {branch}", branch, who=MALLORY)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    lab.git("branch", "side-synced")
    lab.git("branch", "side-synced-plain")
    narrowed = json.dumps(["alice@example.com", "bob@ops.example.com"])
    lab.config.write_text(lab.config.read_text().replace(json.dumps(APPROVERS), narrowed))
    lab.run()  # records the narrowed policy
    lab.records = lab.git("log", "--format=%s", "--", ".plangate/policy.json").splitlines()  # type: ignore[attr-defined]
    lab.set_status("pol-fp", "rejected")
    lab.commit("reject pol-fp", CAROL)
    lab.git("checkout", "-q", "-b", "side-new")
    lab.set_status("pol-new", "rejected")
    lab.commit("reject pol-new", CAROL)
    lab.git("checkout", "-q", "main")
    _merge(lab, "side-new", "ours")
    for vid, branch, how in [
        ("pol-synced", "side-synced", "ours"),
        ("pol-synced-plain", "side-synced-plain", "plain"),
    ]:
        lab.git("checkout", "-q", branch)
        lab.git("merge", "-q", "--no-ff", "-m", "sync main", "main", who=CAROL)
        lab.set_status(vid, "rejected")
        lab.commit(f"reject {vid}", CAROL)
        lab.git("checkout", "-q", "main")
        _merge(lab, branch, how)
    lab.run()
    lab.after_withdraw = {  # type: ignore[attr-defined]
        r["plan"]: r.get("status")
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    for vid in VIDS:
        if lab.plan(vid)["plan"]["status"] == "rejected":
            lab.set_status(vid, "pending_approval")
            lab.commit(f"agent reopens {vid}", AGENT)
        lab.approve(vid, ALICE)
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
    return shared(tmp_path_factory, "r39-policyfork", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_the_new_policy_was_recorded(lab: Lab) -> None:
    """The bench: two ``plangate: record policy`` commits before Carol's rejections."""
    assert len(lab.records) == 2, lab.records  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(VIDS))
def test_a_removed_approver_rejects_nothing(lab: Lab, vid: str) -> None:
    after = lab.after_withdraw  # type: ignore[attr-defined]
    assert after.get(f"plans/{vid}") != "rejected", (after, lab.codes(vid))
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", VIDS)
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert all(e.get("approval_valid") for e in runs), runs
    listed = [
        d
        for d in report.get("decisions", []) or []
        if d.get("plan") == f"plans/{vid}" and d.get("kind") == "reject"
    ]
    counted = lab.calls(vid) == []
    assert bool(listed) == counted, (listed, counted, json.dumps(report)[:3000])
