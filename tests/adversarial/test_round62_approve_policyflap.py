"""Round 62, approval side: round 61's recorded policy against policy flapping and withdrawals
made on branches forked before a record and merged after it.

docs/approvals.md, "The recorded policy": a policy is recorded only by the controller's
``plangate: record policy`` commit; "When the policy of its config differs from its last own
record, the controller makes that commit even if the file already holds those bytes";
"Withdrawals are judged by the controller's last own record before them, and the audit reads
the record commits ... for the policy history". "Rejections and aborts count only from an
allowed approver or an author of the plan".

Lab (one, local mode, dates on a past clock, no sleep). Policy A: the bench's approvers
(Alice, ``*@ops.example.com``: Bob). Policy B: Alice and Mallory (Bob departed, Mallory
joined). The config goes A -> B -> A (flapping back to bytes recorded before):

- pass 1 (A): every plan frozen, A recorded. Two branches are forked here.
- Bob approves ``f1``; pass 2 runs it.
- the config becomes B; pass 3 records B.
- on the branches forked before that record, Mallory (now an approver) rejects ``br-joined``
  and Bob (departed) rejects ``br-departed``; each merges ``--no-ff`` into main. On main,
  Mallory rejects ``fl-joined``, Bob rejects ``fl-departed``, Mallory approves ``f2``, Bob
  approves ``f2x``; pass 4.
- the config becomes A again; pass 5 records A again.
- Bob approves ``f3``, Mallory ``f4``; Alice approves ``br-joined``, ``br-departed``,
  ``fl-joined``, ``fl-departed``; passes 6 and 7.
- ``tie``: the config flaps A -> B -> A once more with every commit and pass in ONE second:
  under B Mallory approves ``tie-b`` and Bob ``tie-bx``; under A again Bob approves ``tie-a``.
- ``plangate audit --json`` without (``plain``) and with ``--config`` (``config``); then the
  operator edits the config to B and audits before any pass (``pending``).

Asserted: ``f1``, ``f2``, ``f3`` run once (valid to both audits, no policy finding);
``f2x`` and ``f4`` never run (``E_APPROVER_NOT_ALLOWED``); a rejection by an approver of the
policy in force when it reached the branch vetoes (``br-joined``, ``fl-joined`` never run), one
by a departed approver is ignored (``br-departed``, ``fl-departed`` run once on Alice's
approval); each audit lists exactly the runs the controller made, with no ``policy-*``
finding.

Seen: see ``BROKEN`` and FINDINGS.md, round 62.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, APPROVERS, BOB, MALLORY, Lab, cases, plan_text, valid_runs
from policykit import PastClock, set_approvers
from test_round2_execution_kit import shared

RUN = ["f1", "f2", "f3", "br-departed", "fl-departed", "tie-b", "tie-a"]
NOT_RUN = ["f2x", "f4", "br-joined", "fl-joined", "tie-bx"]
BROKEN: dict[str, object] = {}
#: Findings the story makes on purpose: Bob's rejections once he departed, Alice's approval of
#: a plan an allowed approver rejected.
EXPECTED = {"withdraw-not-allowed", "illegal"}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    clock = PastClock(lab)
    tick, run = clock.tick, clock.run

    a = list(APPROVERS)
    b = ["alice@example.com", "mallory@example.com"]
    tick()
    for v in RUN + NOT_RUN:
        lab.write(v, plan_text(v))
    lab.commit("agent adds plans", AGENT)
    run()
    fork = lab.head()
    tick()
    lab.approve("f1", BOB)
    run()
    set_approvers(lab, b)
    run()
    for v, who in (("br-joined", MALLORY), ("br-departed", BOB)):
        tick()
        lab.git("checkout", "-q", "-b", f"side/{v}", fork)
        lab.set_status(v, "rejected")
        lab.commit(f"reject {v}", who)
        lab.git("checkout", "-q", "main")
        tick()
        lab.git("merge", "-q", "--no-ff", "-m", f"merge side/{v}", f"side/{v}", who=who)
    for v, who, st in (
        ("fl-joined", MALLORY, "rejected"),
        ("fl-departed", BOB, "rejected"),
        ("f2", MALLORY, "approved"),
        ("f2x", BOB, "approved"),
    ):
        tick()
        lab.set_status(v, st)
        lab.commit(f"{st} {v}", who)
    run()
    set_approvers(lab, a)
    run()
    tick()
    lab.approve("f3", BOB)
    tick()
    lab.approve("f4", MALLORY)
    tick()
    for v in ("br-joined", "br-departed", "fl-joined", "fl-departed"):
        lab.set_status(v, "approved")
    lab.commit("alice approves", ALICE)
    run()
    run()
    # tie: the config flaps A -> B -> A again with every commit in ONE second (a daemon
    # reloading a config edited and undone at once): Mallory approves tie-b, Bob tie-bx
    # under B; Bob approves tie-a under A
    tick()
    set_approvers(lab, b)
    lab.run()
    lab.set_status("tie-b", "approved")
    lab.commit("approve tie-b", MALLORY)
    lab.set_status("tie-bx", "approved")
    lab.commit("approve tie-bx", BOB)
    lab.run()
    set_approvers(lab, a)
    lab.run()
    lab.approve("tie-a", BOB)
    lab.run()
    lab.run()
    lab.reports = {  # type: ignore[attr-defined]
        "plain": lab.audit()[1],
        "config": lab.audit(config=lab.config)[1],
    }
    # pending: the operator edits the config (B) and audits before any pass
    set_approvers(lab, b)
    lab.reports["pending"] = lab.audit(config=lab.config)[1]  # type: ignore[attr-defined]
    lab.records = lab.git(  # type: ignore[attr-defined]
        "log", "--format=%H %s", "--grep=^plangate: record policy"
    ).splitlines()
    lab.git_date = None
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r62-policyflap", _build)


def test_five_records(lab: Lab) -> None:
    assert len(lab.records) == 5, lab.records  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(RUN, RUN, BROKEN))  # type: ignore[arg-type]
def test_runs_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]


@pytest.mark.parametrize("vid", cases(NOT_RUN, NOT_RUN, BROKEN))  # type: ignore[arg-type]
def test_never_runs(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]


AUDITS = [f"{k}-{v}" for k in ("plain", "config", "pending") for v in RUN + NOT_RUN]


@pytest.mark.parametrize("aid", cases(AUDITS, AUDITS, BROKEN))  # type: ignore[arg-type]
def test_audit_agrees(lab: Lab, aid: str) -> None:
    kind, vid = aid.split("-", 1)
    report: dict[str, Any] = lab.reports[kind]  # type: ignore[attr-defined]
    ran = bool(lab.calls(vid))
    assert bool(valid_runs(report, vid)) == ran, (ran, report)
    flagged = [
        f
        for f in report.get("findings", [])
        if f.get("plan") == f"plans/{vid}" and f.get("kind") not in EXPECTED
    ]
    assert flagged == [], flagged


@pytest.mark.parametrize("kind", ["plain", "config", "pending"])
def test_no_policy_finding(lab: Lab, kind: str) -> None:
    report: dict[str, Any] = lab.reports[kind]  # type: ignore[attr-defined]
    bad = [f for f in report.get("findings", []) if "policy" in json.dumps(f)]
    assert bad == [], bad
