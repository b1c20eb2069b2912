"""Round 79, approval side: an approval carried by a byte-exact move (round 77,
r77movedappr; docs/approvals.md, moves) across a POLICY change made before any pass read it:
the approver removed, a quorum raised (docs/approvals.md, "Judged again": "each collected
vote is judged again, from its commit, under the policy in force when the next approval is
decided"). Does the carried request keep the policy it was made under, or a policy record
the fresh clone's audit reads differently?

Lab (one, local mode, fake dates). The config starts with the lab's approvers (Alice and
``*@ops.example.com``: Carol is one) and no rules. The agent writes ``plans/<v>`` per id.
P0 freezes. Gap 1: Alice approves ``alice-*`` and ``rq-*``, Carol approves ``carol-*``; the
agent then (next commit) ``git mv``s every ``*-mv`` plan to ``<v>-d``, ``*-mv2`` twice
(``-d``, then ``-e`` in a second commit). The operator then narrows the config: the
approvers are Alice and ``bob@ops.example.com`` only (Carol removed), and a rule asks two
approvals for ``plans/rq*/**``. P1. Gap 2: Bob approves every ``rq-*`` plan where it now is.
P2. Gap 3: the operator restores Carol (every id sees it; ``carol-back`` is one more
``git mv`` into ``-d``). P3.

- ``alice-stay``, ``alice-mv``, ``alice-mv2`` (controls): run once at P1, approver alice;
- ``carol-stay``, ``carol-mv``, ``carol-mv2``, ``carol-back``: Carol is no approver when the
  first pass decides: ``E_APPROVER_NOT_ALLOWED``, never run, not after she is restored
  either (a refused request is no open vote);
- ``rq-stay``, ``rq-mv``, ``rq-mv2``: two approvals needed when decided: Alice's (carried)
  vote is ``partial`` at P1, Bob's makes two at P2: run once, after P1.

What must hold: the runs as above; every counted run's approver allowed under the policy in
force; the fresh clone's audit (which reads the controller's policy records) agrees with the
controller's audit on every id.

Seen (round 79): no break; every id held. A carried request is judged when a pass decides
it, under the policy then in force, wherever it moved: Carol's approvals, moved once or
twice before the narrowed config's first pass, were ``E_APPROVER_NOT_ALLOWED`` naming her,
never ran, and her later restoration ran nothing (the refusal took the request back); Alice's
moved approvals under the raised quorum were ``partial`` at P1 and Bob's vote made two at
P2 (one run each); the controller's audit and the fresh clone's (which reads the policy
records the narrowing committed) agreed on every id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, APPROVERS, BOB, CAROL, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock

ALL = [
    "alice-stay",
    "alice-mv",
    "alice-mv2",
    "carol-stay",
    "carol-mv",
    "carol-mv2",
    "carol-back",
    "rq-stay",
    "rq-mv",
    "rq-mv2",
]
RULE = """\
rules:
  - match: {paths: ["plans/rq*/**"]}
    require: [{count: 2}]
"""

BROKEN: dict[str, Any] = {}


def who(v: str) -> str:
    return v.split("-", 1)[0]


def way(v: str) -> str:
    return v.split("-", 1)[1]


def home(v: str) -> str:
    return {"stay": v, "mv": f"{v}-d", "mv2": f"{v}-e", "back": f"{v}-d"}[way(v)]


def _narrow(lab: Lab, carol: bool) -> None:
    lab.write_config(approval=RULE)
    if not carol:
        text = lab.config.read_text()
        old = json.dumps(APPROVERS)
        assert old in text, text
        lab.config.write_text(text.replace(old, json.dumps([ALICE[1], BOB[1]])))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    for v in ALL:
        lab.write(v, plan(v))
    c.commit("agent plans")
    c.run()  # P0
    for v in ALL:
        if who(v) != "carol":
            lab.set_status(v, "approved")
    c.commit("alice: approve", who=ALICE)
    for v in ALL:
        if who(v) == "carol":
            lab.set_status(v, "approved")
    c.commit("carol: approve", who=CAROL)
    for v in ALL:
        if way(v) in ("mv", "mv2", "back"):
            lab.git("mv", f"plans/{v}", f"plans/{v}-d")
    c.commit("agent: moves")
    for v in ALL:
        if way(v) == "mv2":
            lab.git("mv", f"plans/{v}-d", f"plans/{v}-e")
    c.commit("agent: moves again")
    _narrow(lab, carol=False)
    c.run()  # P1
    lab.p1 = {v: (len(lab.calls(v)), lab.codes(home(v))[:1500]) for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        if who(v) == "rq":
            lab.set_status(home(v), "approved")
    c.commit("bob: approve the rq plans", who=BOB)
    c.run()  # P2
    _narrow(lab, carol=True)
    c.run()  # P3
    lab.final = {v: lab.codes(home(v))[:2500] for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r79-repolicy", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}", f"plans/{v}-d", f"plans/{v}-e"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def said(lab: Lab, v: str) -> str:
    return str((lab.p1[v], lab.final[v]))[:4000]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_the_version_runs_as_the_policy_in_force_allows(lab: Lab, vid: str) -> None:
    want = 0 if who(vid) == "carol" else 1
    assert len(lab.calls(vid)) == want, said(lab, vid)
    first = 1 if who(vid) == "alice" else 0
    assert lab.p1[vid][0] == first, said(lab, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_the_row_says_why(lab: Lab, vid: str) -> None:
    p1 = lab.p1[vid][1]  # type: ignore[attr-defined]
    if who(vid) == "carol":
        assert "E_APPROVER_NOT_ALLOWED" in p1 and CAROL[1] in p1, said(lab, vid)
    elif who(vid) == "rq":
        assert "more approvals needed" in p1, said(lab, vid)
    else:
        assert '"status": "completed"' in p1, said(lab, vid)


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_every_counted_run_names_an_approver_in_force(lab: Lab, vid: str) -> None:
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == len(lab.calls(vid)), runs
    for r in runs:
        assert r.get("approver") in (ALICE[1], BOB[1]), runs


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert sorted((e.get("plan"), str(e.get("approver"))) for e in mine) == sorted(
        (e.get("plan"), str(e.get("approver"))) for e in fresh
    ), (mine, fresh)
