"""Round 61, the policy changes while a quorum is being collected or a run waits at a gate
(a config reload between passes), with ``plangate check`` as the pull request's gate and the
fresh-clone audit as the judge afterwards. Fake commit dates, no sleeping.

docs/approvals.md: collected votes are "judged again ... under the policy in force when the
next approval is decided"; the controller "recomputes risk and requirement from its catalog
and config when it decides (an author who writes ``risk: low`` into ``frozen:`` changes
nothing)"; the audit judges each start "by the policy its ``start`` commit names".

Config v1: rules ``risk: high`` needs 2, ``plans/low/**`` needs 2, ``plans/aged/**`` needs 2;
tool ``lift`` (echo) risk medium, ``drop`` (echo) risk high; ``max_age: null``; identity
author. Timeline (git dates): at T-3h the agent adds ``aged/x`` and the gated plan
``gate/aged``; Alice votes on both (``aged/x`` partial; ``gate/aged`` runs action 1 and
pauses). At T-10m the agent adds ``low/x`` (rec), ``r/raised`` (lift, then rec),
``r/claim`` (drop, then rec) and the gated ``gate/cmt``; Alice votes ``low/x`` (partial) and
approves ``gate/cmt`` (action 1 runs, it pauses); the agent rewrites
``r/claim``'s ``frozen:`` block to ``risk: low``, ``require: [{count: 1}]``. At T-5m the
operator reloads v2: ``plans/low/**`` needs 1, ``lift`` risk high, ``max_age: 1h``,
``identity: committer``. Then a pull request of Alice's (her votes on ``low/x``,
``r/raised``, ``r/claim``), checked with ``plangate check --as alice``, merged ``--no-ff`` by
her; Bob votes ``aged/x`` in his own pull request (checked with ``--as bob``, merged
``--no-ff`` by him); Alice approves ``gate/aged``'s gate; a commit AUTHORED by Mallory
and COMMITTED by Alice approves ``gate/cmt``'s gate. At T-1m Bob votes ``r/raised`` and
``r/claim``.

Asserted per variant:

- ``low``: count lowered after Alice's vote; her re-vote meets it: runs once; check said
  ``start``.
- ``raised``: the tool's risk raised after the freeze: Alice alone stays partial (check said
  so), Bob completes it: runs once.
- ``claim``: the forged ``frozen:`` claim changes nothing: partial after Alice (check too),
  runs after Bob.
- ``aged``: ``max_age`` set while collecting: Bob's vote is ``E_PLAN_EXPIRED`` (check
  predicted ``refuse`` with it), never runs.
- ``gaged``, ``gcmt``: the controller and the audit agree on the gate approval (valid and
  ran, or refused and did not); ``gaged`` (frozen 3 h before, ``max_age`` set while it
  waits) is refused ``E_PLAN_EXPIRED`` at its gate; ``gcmt`` (Alice the committer under
  ``identity: committer``) runs its action 2.
- the fresh-clone audit lists exactly the runs the controller made, every one valid, and no
  finding but the agent's edit of ``r/claim``.

Seen: all held.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, clone_audit, plan_text
from test_round2_execution_kit import shared

GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""


def _policy(low: int, lift: str, max_age: str, ident: str) -> tuple[str, str]:
    return (
        f"identity: {ident}\nmax_age: {max_age}\nrules:\n"
        "  - {match: {risk: high}, require: [{count: 2}]}\n"
        f"  - {{match: {{paths: ['plans/low/**']}}, require: [{{count: {low}}}]}}\n"
        "  - {match: {paths: ['plans/aged/**']}, require: [{count: 2}]}\n",
        f"lift: {{kind: echo, risk: {lift}}}\ndrop: {{kind: echo, risk: high}}\n",
    )


def _two_step(tag: str, tool: str) -> str:
    return (
        f"plan:\n  name: {tag}\n  task: t\n  status: pending_approval\n"
        f"available_tools:\n  - name: rec\n  - name: {tool}\n"
        f"actions:\n  - id: 1\n    tool: {tool}\n    why: w\n    params: {{x: 1}}\n"
        f"  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {tag}}}\n"
    )


def _build(root: Path) -> Lab:
    now = int(time.time())
    lab = Lab(root / "lab")

    def at(ago: int) -> None:
        lab.git_date = f"@{now - ago} +0000"

    def config(*args: Any) -> None:
        approval, tools = _policy(*args)
        lab.write_config(approval=approval, tools=tools)

    config(2, "medium", "null", "author")
    at(3 * 3600)
    lab.write("aged/x", plan_text("aged"))
    lab.write("gate/aged", plan_text("gaged", extra_actions=GATE.format(tag="gaged")))
    lab.commit("agent adds plans")
    lab.run()
    for slug in ["aged/x", "gate/aged"]:
        lab.set_status(slug, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    at(600)
    lab.write("low/x", plan_text("low"))
    lab.write("r/raised", _two_step("raised", "lift"))
    lab.write("r/claim", _two_step("claim", "drop"))
    lab.write("gate/cmt", plan_text("gcmt", extra_actions=GATE.format(tag="gcmt")))
    lab.commit("agent adds more plans")
    lab.run()
    lab.set_status("gate/cmt", "approved")
    lab.approve("low/x", ALICE)
    claim = lab.read("r/claim")
    claim = claim.replace("risk: high", "risk: low").replace("count: 2", "count: 1")
    lab.write("r/claim", claim.replace("rule: 0", "rule: null"))
    lab.agent_edit = lab.commit("agent tidies the frozen block", AGENT)  # type: ignore[attr-defined]
    lab.run()
    at(300)
    config(1, "high", "1h", "committer")
    lab.run()
    lab.git("checkout", "-q", "-b", "pr")
    for slug in ["low/x", "r/raised", "r/claim"]:
        lab.set_status(slug, "approved")
    lab.commit("alice approves three", ALICE)
    result = lab.cli(
        "check",
        "--base",
        "main",
        "--head",
        "pr",
        "--as",
        ALICE[1],
        "--format",
        "json",
        "--config",
        str(lab.config),
        cwd=lab.repo,
    )
    lab.check = {p["plan"]: p for p in json.loads(result.stdout)["plans"]}  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge pr", "pr", who=ALICE)
    lab.git("checkout", "-q", "-b", "pr-bob")
    lab.approve("aged/x", BOB)
    result = lab.cli(
        "check",
        "--base",
        "main",
        "--head",
        "pr-bob",
        "--as",
        BOB[1],
        "--format",
        "json",
        "--config",
        str(lab.config),
        cwd=lab.repo,
    )
    lab.check_bob = json.loads(result.stdout)["plans"]  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge pr-bob", "pr-bob", who=BOB)
    lab.approve("gate/aged", ALICE)
    lab.set_status("gate/cmt", "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "--author=Mallory <mallory@example.com>", "-m", "gate", who=ALICE)
    lab.run()
    lab.after_alice = {  # type: ignore[attr-defined]
        v: len(lab.calls(v)) for v in ["low", "raised", "claim", "aged"]
    }
    lab.status_after_alice = lab.status()  # type: ignore[attr-defined]
    at(60)
    for slug in ["r/raised", "r/claim"]:
        lab.set_status(slug, "approved")
    lab.commit("bob approves two", BOB)
    lab.run()
    lab.git_date = None
    lab.report = clone_audit(lab, root)[0]  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r61-reload", _build)


def _report(lab: Lab) -> dict[str, Any]:
    return lab.report  # type: ignore[attr-defined,no-any-return]


def test_low_a_lowered_count_is_met_by_the_revote(lab: Lab) -> None:
    assert lab.check["plans/low/x"]["outcome"] == "start", lab.check["plans/low/x"]  # type: ignore[attr-defined]
    assert lab.after_alice["low"] == 1, lab.codes("low/x")  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ["raised", "claim"])
def test_risk_is_the_catalogs_at_the_decision(lab: Lab, vid: str) -> None:
    predicted = lab.check[f"plans/r/{vid}"]  # type: ignore[attr-defined]
    assert predicted["outcome"] == "partial", predicted
    assert lab.after_alice[vid] == 0, lab.status_after_alice[f"plans/r/{vid}"]  # type: ignore[attr-defined]
    assert "1 more" in json.dumps(lab.status_after_alice[f"plans/r/{vid}"])  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1, lab.codes(f"r/{vid}")


def test_aged_max_age_set_while_collecting_expires_the_version(lab: Lab) -> None:
    predicted = [p for p in lab.check_bob if p["plan"] == "plans/aged/x"]  # type: ignore[attr-defined]
    assert len(predicted) == 1 and predicted[0]["outcome"] == "refuse", predicted
    assert "E_PLAN_EXPIRED" in json.dumps(predicted[0]["refused"]), predicted
    assert lab.calls("aged") == []
    assert "E_PLAN_EXPIRED" in lab.codes("aged/x"), lab.codes("aged/x")


@pytest.mark.parametrize("vid", ["gaged", "gcmt"])
def test_gate_the_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    slug = {"gaged": "gate/aged", "gcmt": "gate/cmt"}[vid]
    ran = len(lab.calls(f"{vid}-gated"))
    gates = [
        e
        for e in _report(lab)["executions"]
        if e["plan"] == f"plans/{slug}" and e["approval_kind"] == "gate"
    ]
    assert ran == len(gates), (ran, gates, lab.codes(slug))
    assert all(e["approval_valid"] for e in gates), gates
    if vid == "gcmt":
        assert ran == 1, lab.codes(slug)
    else:
        assert ran == 0 and "E_PLAN_EXPIRED" in lab.codes(slug), lab.codes(slug)


def test_the_audit_lists_exactly_the_controllers_runs(lab: Lab) -> None:
    execs = _report(lab)["executions"]
    assert all(e["approval_valid"] for e in execs), execs
    firsts = sorted(e["plan"] for e in execs if e["approval_kind"] == "approve")
    assert firsts == [
        "plans/gate/aged",
        "plans/gate/cmt",
        "plans/low/x",
        "plans/r/claim",
        "plans/r/raised",
    ], firsts
    others = [f for f in _report(lab)["findings"] if f.get("commit") != lab.agent_edit]  # type: ignore[attr-defined]
    assert others == [], others
