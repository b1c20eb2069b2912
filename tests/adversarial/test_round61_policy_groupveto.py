"""Round 61, groups and withdrawals: a group member who is no approver, gates under a
group rule, and an alias declared mid-quorum that makes two voters one person.

docs/configuration.md: "A group member must also match ``approval.approvers``: groups narrow
who counts for a rule, they never widen who may approve". docs/approvals.md: rejections and
aborts "count only from an allowed approver or an author of the plan"; "One person counts
once"; collected votes are "judged again ... under the policy in force" (an alias included).

Config: the bench's approvers (Alice, ``*@ops.example.com``); groups ``sec: [alice,
mallory]`` (Mallory is in a group but no approver), ``ops: ['*@ops.example.com']``; rules
``plans/g/**`` needs ``{group: sec, count: 1}``, ``plans/q3/**`` needs ``{count: 3}``. Every
``g`` plan has a gated action 2. The agent writes every plan; the controller freezes.

- ``rej``: Mallory sets ``rejected``; then Alice approves (Mallory's veto must be ignored:
  action 1 runs).
- ``vote``: Mallory approves (refused ``E_APPROVER_NOT_ALLOWED``, nothing runs).
- ``gate``: Alice approves; at the gate Mallory approves (refused; action 2 never runs).
- ``abort``: Alice approves; at the gate Mallory sets ``aborted`` (ignored), then Alice
  approves the gate (action 2 runs once).
- ``q3/merge``: Alice and Bob vote (partial, 2 of 3); the operator declares ``people:
  [[alice, bob]]`` (one person); Carol votes: must stay partial ("1 more"); then Dave
  (``*@ops``) votes: three people, it runs once.

Asserted: the controller as above, and the fresh-clone audit (no config) agrees: Mallory's
rejection and abort flagged ``withdraw-not-allowed``, every listed execution valid, no run
of ``vote``/``gate``'s action 2, ``q3/merge`` started once after Dave's vote with his
approval valid.

Seen: all held. (Noted, not a variant: a gate of a ``sec``-only plan is continued by Bob, an
approver outside ``sec``, as documented: "gates and resumes still need one approval".)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, CAROL, MALLORY, Lab, clone_audit, plan_text
from test_round2_execution_kit import shared

DAVE = ("Dave", "dave@ops.example.com")
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
POL = """\
groups:
  sec: [alice@example.com, mallory@example.com]
  ops: ["*@ops.example.com"]
rules:
  - {match: {paths: ['plans/g/**']}, require: [{group: sec, count: 1}]}
  - {match: {paths: ['plans/q3/**']}, require: [{count: 3}]}
"""
GVIDS = ["rej", "vote", "gate", "abort"]


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab", approval=POL)
    for v in GVIDS:
        lab.write(f"g/{v}", plan_text(v, extra_actions=GATE.format(tag=v)))
    lab.write("q3/merge", plan_text("merge"))
    lab.commit("agent adds plans")
    lab.run()
    lab.set_status("g/rej", "rejected")
    lab.commit("mallory rejects", MALLORY)
    lab.set_status("g/vote", "approved")
    lab.commit("mallory approves", MALLORY)
    for v in ["gate", "abort"]:
        lab.set_status(f"g/{v}", "approved")
    lab.set_status("q3/merge", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.set_status("g/rej", "approved")
    lab.commit("alice approves rej", ALICE)
    lab.set_status("g/gate", "approved")
    lab.commit("mallory approves the gate", MALLORY)
    lab.set_status("g/abort", "aborted")
    lab.commit("mallory aborts", MALLORY)
    lab.set_status("q3/merge", "approved")
    lab.commit("bob approves", BOB)
    lab.run()
    lab.set_status("g/abort", "approved")
    lab.commit("alice approves the gate", ALICE)
    lab.write_config(
        approval=POL + "identity_aliases:\n  people: [[alice@example.com, bob@ops.example.com]]\n"
    )
    lab.set_status("q3/merge", "approved")
    lab.commit("carol approves", CAROL)
    lab.run()
    lab.after_carol = lab.status()["plans/q3/merge"]  # type: ignore[attr-defined]
    lab.ran_after_carol = len(lab.calls("merge"))  # type: ignore[attr-defined]
    lab.set_status("q3/merge", "approved")
    lab.commit("dave approves", DAVE)
    lab.run()
    lab.report = clone_audit(lab, root)[0]  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r61-groupveto", _build)


def _report(lab: Lab) -> dict[str, Any]:
    return lab.report  # type: ignore[attr-defined,no-any-return]


def test_a_group_only_member_vetoes_nothing(lab: Lab) -> None:
    assert len(lab.calls("rej")) == 1, lab.codes("g/rej")


def test_a_group_only_member_approves_nothing(lab: Lab) -> None:
    assert lab.calls("vote") == [], lab.codes("g/vote")
    assert "E_APPROVER_NOT_ALLOWED" in lab.codes("g/vote")


def test_a_group_only_member_opens_no_gate(lab: Lab) -> None:
    assert len(lab.calls("gate")) == 1
    assert lab.calls("gate-gated") == [], lab.codes("g/gate")


def test_a_group_only_member_aborts_nothing(lab: Lab) -> None:
    assert len(lab.calls("abort")) == 1
    assert len(lab.calls("abort-gated")) == 1, lab.codes("g/abort")


def test_an_alias_declared_mid_quorum_makes_two_voters_one(lab: Lab) -> None:
    assert lab.ran_after_carol == 0, lab.after_carol  # type: ignore[attr-defined]
    assert "1 more" in json.dumps(lab.after_carol), lab.after_carol  # type: ignore[attr-defined]
    assert len(lab.calls("merge")) == 1, lab.codes("q3/merge")


@pytest.mark.parametrize("vid", ["rej", "abort"])
def test_the_audit_flags_the_group_only_withdrawal(lab: Lab, vid: str) -> None:
    kinds = [f["kind"] for f in _report(lab)["findings"] if f["plan"] == f"plans/g/{vid}"]
    assert kinds == ["withdraw-not-allowed"], _report(lab)["findings"]


def test_the_audit_agrees_with_every_run(lab: Lab) -> None:
    execs = _report(lab)["executions"]
    assert all(e["approval_valid"] for e in execs), execs
    seen = sorted((e["plan"], e["approval_kind"]) for e in execs)
    assert seen == [
        ("plans/g/abort", "approve"),
        ("plans/g/abort", "gate"),
        ("plans/g/gate", "approve"),
        ("plans/g/rej", "approve"),
        ("plans/q3/merge", "approve"),
    ], seen
    merge = next(e for e in execs if e["plan"] == "plans/q3/merge")
    assert merge["approver"] == "dave@ops.example.com", merge
