"""Round 6, approval side: votes collected under one policy must not count under the next.

The operator changes the config between two approvals of a quorum plan (docs/operations.md:
approvers, tools and rules "apply to the next pass"). Votes live in the controller's
``partial`` commits; if the controller replays them from history without judging them again
under the policy now in force, a person who is no longer allowed completes a quorum, or a
quorum is met by the count the old rule asked for.

Config v1 (first passes): ``plans/two/**`` two approvals; ``plans/grp/**`` two from group
``ops`` (Alice, Bob, Carol); ``plans/three/**`` two; tool ``lift`` risk low; approvers Alice
and ``*@ops.example.com``.

Config v2 (operator's change, before the second approvals): Alice is no approver any more;
Carol leaves ``ops`` (still an approver by the glob); ``plans/three/**`` needs three;
``lift`` is ``risk: high`` (a high-risk plan needs two).

Attacks (the second approval arrives under v2):

- ``two/approver-dropped``: Alice's vote (v1) + Bob's (v2) = 2, but Alice is no approver;
- ``grp/member-dropped``: Carol's ops vote (v1) + Bob's (v2), Carol no longer in ops;
- ``three/rule-raised``: Bob's vote (v1) + Carol's (v2) = 2 of the 3 the rule now asks;
- ``lift/risk-raised``: frozen as low risk (one approval) under v1, one approval under v2;
- ``two/vote-readd``: Bob's vote, then the agent deletes the plan and adds it back (same
  bytes: a new plan, frozen anew), Carol approves: Bob never approved the new plan;

Results: all held (5 of 5).

Controls: ``two/honest`` (Bob v1 + Carol v2) runs; ``lift/honest`` (two approvals under v2)
runs. And a fresh clone's ``plangate audit`` calls every start valid (the controller and the
audit reach the same verdict on the same history).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, BenchError, Lab, plan_text
from test_round2_approval_authors import shared_lab

V1 = """\
groups:
  ops: ["alice@example.com", "bob@ops.example.com", "carol@ops.example.com"]
rules:
  - match: {paths: ["plans/grp/**"]}
    require: [{group: ops, count: 2}]
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
  - match: {paths: ["plans/three/**"]}
    require: [{count: 2}]
  - match: {risk: high}
    require: [{count: 2}]
"""

ATTACKS = [
    "two/approver-dropped",
    "grp/member-dropped",
    "three/rule-raised",
    "lift/risk-raised",
    "two/vote-readd",
]
CONTROLS = ["two/honest", "lift/honest"]


def _tool(lab: Lab, risk: str) -> str:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = json.dumps(str(lab.log))
    return f"lift: {{kind: exec, argv: {rec}, env: {{REC_LOG: {env}}}, risk: {risk}}}\n"


def _lift_text(tag: str) -> str:
    return plan_text(tag).replace("- name: rec", "- name: lift").replace("tool: rec", "tool: lift")


def _v2(lab: Lab) -> None:
    approval = V1.replace(', "carol@ops.example.com"]', "]").replace(
        'paths: ["plans/three/**"]}\n    require: [{count: 2}]',
        'paths: ["plans/three/**"]}\n    require: [{count: 3}]',
    )
    assert approval != V1
    lab.write_config(approval=approval, tools=_tool(lab, "high"))
    text = lab.config.read_text()
    dropped = text.replace('["alice@example.com", "*@ops.example.com"]', '["*@ops.example.com"]')
    assert dropped != text
    lab.config.write_text(dropped)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write_config(approval=V1, tools=_tool(lab, "low"))
    for vid in ATTACKS + CONTROLS:
        lab.write(vid, _lift_text(vid) if vid.startswith("lift/") else plan_text(vid))
    lab.commit("agent adds the plans", AGENT)
    lab.run()  # freeze all (v1)
    # first votes under v1
    lab.approve("two/approver-dropped", ALICE)
    lab.approve("grp/member-dropped", CAROL)
    lab.approve("three/rule-raised", BOB)
    lab.approve("two/vote-readd", BOB)
    lab.approve("two/honest", BOB)
    lab.run()  # partials
    # the agent deletes and re-adds two/vote-readd with the same bytes
    text = lab.git("show", "HEAD:plans/two/vote-readd/PLAN.yml")
    shutil.rmtree(lab.repo / "plans" / "two" / "vote-readd")
    lab.commit("agent removes vote-readd", AGENT)
    lab.run()
    lab.write("two/vote-readd", text)
    lab.commit("agent adds vote-readd again", AGENT)
    lab.run()
    # the operator changes the policy (a reload: the next pass uses it)
    _v2(lab)
    lab.run()  # records the new policy
    lab.approve("two/approver-dropped", BOB)
    lab.approve("grp/member-dropped", BOB)
    lab.approve("three/rule-raised", CAROL)
    lab.approve("lift/risk-raised", BOB)
    lab.approve("two/vote-readd", CAROL)
    lab.approve("two/honest", CAROL)
    lab.approve("lift/honest", BOB)
    lab.run()
    lab.approve("lift/honest", CAROL)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r6-policy", _build)


@pytest.mark.parametrize("vid", CONTROLS)
def test_honest_quorums_under_the_new_policy_run(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", ATTACKS)
def test_a_vote_counts_only_under_the_policy_in_force(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    data = lab.plan(vid)
    assert data["plan"]["status"] == "pending_approval", lab.codes(vid)


def test_a_fresh_clone_audit_agrees_with_what_ran(lab: Lab) -> None:
    clone = lab.root / "clone-audit"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True, env=lab.env())
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    try:
        report = json.loads(result.stdout)
    except ValueError as exc:
        raise BenchError(f"audit: {result.stdout[-500:]} {result.stderr[-500:]}") from exc
    runs = report.get("executions") or report.get("runs") or []
    started = {r.get("plan") for r in runs}
    assert started == {f"plans/{v}" for v in CONTROLS}, started
    bad = [r for r in runs if not r.get("approval_valid")]
    assert bad == [], bad
