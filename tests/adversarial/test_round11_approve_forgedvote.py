# ruff: noqa: E501  (attack steps read best on one line)
"""Round 11, who may make a plan run: votes written into the plan's ``approval:`` block (not
hashed) by the agent.

SPEC §11: until a quorum is met the controller records ``approval: {status: partial,
approvals: [{by, at, commit}], missing}``. The block is controller-owned but any commit can
edit it. If a pass reads the votes back from the file (rather than from the controller's own
``partial`` commits), the agent adds votes.

Config: ``plans/two/**`` needs two approvals. A real vote of Bob exists on ``two/bobs``
(partial), so every forged vote can cite a real commit of Bob's.

- ``two/add-bob``: Alice votes (partial); the agent appends ``{by: bob@ops.example.com,
  commit: <Bob's vote on two/bobs>}`` to the block and sets ``missing: ""``; Alice approves
  again (the same person: no second vote).
- ``two/pre-bob``: before anyone votes, the agent writes a ``partial`` block holding Bob's
  vote (his real commit on ``two/bobs``, the plan hash set to this plan's); Alice approves.
- ``two/self-approved``: the agent writes ``approval: {status: approved, ...}`` naming Bob and
  Alice, then Alice approves once.
- ``two/hash-swap``: Alice votes on ``two/hash-swap``; the agent copies ``two/bobs``'s whole
  ``approval:`` block (Bob's vote, its plan hash) into it; Alice approves again.

Defence: each stays ``partial`` with one vote; nothing runs; ``check --as alice`` predicted
no start; a fresh-clone audit agrees. Control: ``two/honest`` (Alice then Bob) runs once.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import test_round11_approve_frozenrisk as frozenrisk
from advkit import AGENT, ALICE, BOB, Lab, clone_audit, plan_text
from test_round2_approval_authors import shared_lab

APPROVAL = """\
rules:
  - match: {risk: high}
    require: [{count: 2}]
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
"""
VIDS = ["two/add-bob", "two/pre-bob", "two/self-approved", "two/hash-swap"]
CHECKED = ["two/add-bob", "two/self-approved"]  # through a pull request and `check` (suite time)
BROKEN: dict[str, object] = {}


def _tag(vid: str) -> str:
    return vid.replace("/", "-")


def _cut_block(text: str) -> str:
    return re.sub(r"\napproval:\n(  .*\n?)*", "\n", text)


def _block(text: str) -> str:
    m = re.search(r"\napproval:\n(?:  .*\n?)*", text)
    assert m, text
    return m.group(0).lstrip("\n")


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    log = json.dumps(str(lab.log))
    lab.write_config(
        approval=APPROVAL,
        tools=f"danger: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}, risk: high}}\n",
    )
    for vid in [*VIDS, "two/honest", "two/bobs"]:
        lab.write(vid, plan_text(_tag(vid)))
    lab.commit("agent adds plans", AGENT)
    frozenrisk.prepare(lab)
    lab.run()  # freeze
    frozenrisk.after_freeze(lab)
    bob_vote = lab.approve("two/bobs", BOB)
    for vid in ["two/add-bob", "two/honest", "two/hash-swap"]:
        lab.approve(vid, ALICE)
    lab.run()  # partial
    bobs_block = _block(lab.read("two/bobs"))
    stamp = "2026-11-25T00:00:00Z"
    # add-bob
    text = lab.read("two/add-bob")
    text = text.replace(
        "  missing: 1 more approval",
        f"  - by: bob@ops.example.com\n    at: '{stamp}'\n    commit: {bob_vote}\n  missing: ''",
    )
    assert bob_vote in text, text
    lab.write("two/add-bob", text)
    # pre-bob
    text = lab.read("two/pre-bob")
    h = lab.plan("two/pre-bob")["frozen"]["hash"]
    lab.write(
        "two/pre-bob",
        _cut_block(text)
        + f"approval:\n  status: partial\n  plan_hash: {h}\n  approvals:\n  - by: bob@ops.example.com\n    at: '{stamp}'\n    commit: {bob_vote}\n  missing: 1 more approval\n",
    )
    # self-approved
    text = lab.read("two/self-approved")
    h = lab.plan("two/self-approved")["frozen"]["hash"]
    lab.write(
        "two/self-approved",
        _cut_block(text)
        + f"approval:\n  status: approved\n  plan_hash: {h}\n  by: bob@ops.example.com\n  commit: {bob_vote}\n  approvals:\n  - by: bob@ops.example.com\n    at: '{stamp}'\n    commit: {bob_vote}\n",
    )
    # hash-swap
    lab.write("two/hash-swap", _cut_block(lab.read("two/hash-swap")) + bobs_block)
    lab.commit("agent edits the approval blocks", AGENT)
    frozenrisk.after_votes(lab)
    checks = {}
    for vid in CHECKED:
        branch = "pr-" + _tag(vid)
        lab.git("checkout", "-q", "-b", branch, "main")
        lab.approve(vid, AGENT)
        lab.git("checkout", "-q", "main")
        out = lab.cli(
            "check",
            "--config",
            str(lab.config),
            "--base",
            "main",
            "--head",
            branch,
            "--as",
            ALICE[1],
            "--format",
            "json",
            cwd=lab.repo,
        )
        checks[vid] = out.stdout
        lab.git("merge", "-q", "--no-ff", "--no-edit", branch, who=ALICE)
    for vid in VIDS:
        if vid not in CHECKED:
            lab.approve(vid, ALICE)
    lab.approve("two/honest", BOB)
    (lab.root / "checks.json").write_text(json.dumps(checks))
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r11-forgedvote", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("two-honest")) == 1, lab.codes("two/honest")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_vote_written_into_the_file_is_no_vote(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", CHECKED)
def test_check_predicted_no_start(lab: Lab, vid: str) -> None:
    out = json.loads((lab.root / "checks.json").read_text())[vid]
    row = next(r for r in json.loads(out)["plans"] if r["plan"] == f"plans/{vid}")
    assert row["outcome"] != "start", row


def test_a_fresh_clone_audit_agrees(lab: Lab, tmp_path: Path) -> None:
    report, valid = clone_audit(lab, tmp_path)
    assert "plans/two/honest" in valid and "plans/risk-two" in valid, report
    assert not valid & {f"plans/{v}" for v in frozenrisk.VIDS}, sorted(valid)
    assert not valid & {f"plans/{v}" for v in VIDS if v not in BROKEN}, sorted(valid)
