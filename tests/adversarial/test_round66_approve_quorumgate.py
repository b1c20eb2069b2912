"""Round 66, approval side: round 65's decision-level lapse (docs/approvals.md, "Replayed
approvals") where a plan needs more than one decision: a QUORUM of two (votes collected in
the controller's ``partial`` commits, docs/approvals.md "Policy") and a GATE
(``requires_approval``: the pause's approval is a decision of its own). Lapses made by the
agent, by the approver herself and by another approver; the agent's copies of a lapsed vote
or gate approval; honest re-approvals after a lapse, one after a lapse the agent dated ten
years ahead.

Lab (one, local mode, fake commit dates, no sleep). Config: ``plans/q-*/**`` needs two
approvals. The agent commits one plan per id: ``q-*`` one ``rec`` call, ``g-*`` a ``rec``
call and a gated one tagged ``<id>-gated``; a pass freezes. Alice approves every plan (her
own commit); a pass collects her vote (``partial``) or runs action 1 and pauses at the gate.
Then, before the next pass:

Lapsed, brought back by another hand (asserted: the plan (quorum) or its gated action
never ran, no valid execution of that kind in the audit):

- ``q-pick``: Bob approves (Y); the agent reverts Y; the agent cherry-picks Y and gives it
  another message.
- ``g-pick``: Alice approves the gate (G) and reverts G; the agent cherry-picks G, another
  message.
- ``g-bob``: Alice approves the gate (G); BOB reverts G; the agent cherry-picks G, another
  message.
- ``g-quoted``: Alice approves the gate (G) and reverts G; the agent cherry-picks G and
  respells the status ``status: "approved"``.

Honest (asserted: ran once, valid in the audit, credited as said):

- ``q-agent``: Bob approves (Y); the agent reverts Y; Bob approves again (a new commit):
  Alice's collected vote and Bob's new one make the quorum.
- ``q-carol``: Bob approves (Y) and reverts Y himself ("not yet"); Carol approves: Alice's
  vote and Carol's.
- ``g-agent``: Alice approves the gate (G); the agent reverts G; Alice approves the gate
  again in the forge's web editor (committer ``GitHub``): the gated action runs.
- ``g-future``: as ``g-agent``, the agent's revert dated ten years ahead.
- ``q-future``: Bob approves (Y); the agent reverts Y dated ten years ahead; Bob approves
  again in the web editor.

Seen (FINDINGS.md, round 66): ``g-future`` and ``q-future`` BROKE (honest work refused):
the agent's revert dated ten years ahead marks the gate approval or the vote lapsed until
then, and the approver's new decision through the web editor is ``E_APPROVAL_REPLAYED`` (the
gate never passes, the quorum is never met; only a commit of her own hand counts). Held:
``q-pick``, ``g-pick``, ``g-bob``, ``g-quoted`` (never ran past the gate / never started,
no valid execution of that kind); honest: ``q-agent``, ``q-carol`` (Alice's collected vote
kept through Bob's lapse), ``g-agent`` (the agent's lapse dated now).

Fixed (2026-11-29): ``g-future`` and ``q-future`` run: a lapse's date is bounded by what its
committer cannot set (``controller.git.lifecycle.Lifecycle._lapse_time``: the earlier of its
author and committer dates, never past the reader's clock nor the first controller commit
after it), and a vote or gate approval of hers dated after that, not a copy of a commit that
carried the lapsed one (its author date), is a new decision (``_lapsed_decision``).

Re-scoped (2026-11-30, round 67): a lapse the decision's author did not commit herself is
dated by the first controller commit after it, and until one by the reader's clock.
``g-agent``, ``g-future`` and ``q-future`` approve again in the web editor with no controller
commit after the agent's lapse: that approval is now refused once, ``E_APPROVAL_REPLAYED``
with the remedy (asserted); after the refusal (a controller commit) the next web approval
counts: the gated action runs; for ``q-future`` Bob's vote counts and, the refusal being
plan-level (it drops the collected votes, docs/approvals.md "Policy"), Alice votes again and
the plan runs once.

Re-scoped (2026-11-30, round 69): ``E_APPROVAL_REPLAYED`` keeps the votes collected (a
refusal of a decision, not of the version): ``q-future`` runs once on Alice's kept vote and
Bob's web approval after the refusal; her later vote finds it run.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, cases, plan_text
from policykit import DatedClock
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
POL = """\
rules:
  - {match: {paths: ['plans/q-*/**']}, require: [{count: 2}]}
"""
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
LAPSED = ["q-pick", "g-pick", "g-bob", "g-quoted"]
HONEST = ["q-agent", "q-carol", "g-agent", "g-future", "q-future"]
BROKEN: dict[str, object] = {}
#: The approver's first web approval after the agent's lapse, no controller commit in
#: between: refused once (round 67), then the next one counts.
AGAIN = ["g-agent", "g-future", "q-future"]


def _kinds(lab: Lab, vid: str, kind: str) -> list[dict[str, object]]:
    return [
        e
        for e in lab.report.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") == f"plans/{vid}"
        and e.get("approval_kind") == kind
        and e.get("approval_valid")
    ]


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=POL)
    c = DatedClock(lab)
    for v in [*LAPSED, *HONEST]:
        extra = GATE.format(tag=v) if v.startswith("g-") else ""
        lab.write(v, plan_text(v, extra_actions=extra) if extra else plan_text(v))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans", who=AGENT)
    c.run()
    for v in [*LAPSED, *HONEST]:
        c.set(v, "approved", msg=f"approve {v}")
    c.run()
    future = int(time.time()) + 10 * 365 * 86400
    # quorum: Bob's vote taken back
    y = {}
    for v in ("q-pick", "q-agent", "q-carol", "q-future"):
        y[v] = c.set(v, "approved", who=BOB, msg="lgtm")
    c.git("revert", "--no-edit", y["q-pick"], who=AGENT, by=AGENT)
    c.git("revert", "--no-edit", y["q-agent"], who=AGENT, by=AGENT)
    c.git("revert", "--no-edit", y["q-carol"], who=BOB, by=BOB)
    c.git("revert", "--no-edit", y["q-future"], who=AGENT, by=AGENT, adate=future)
    # gates: her gate approval taken back
    g = {}
    for v in ("g-pick", "g-bob", "g-quoted", "g-agent", "g-future"):
        g[v] = c.set(v, "approved", msg="gate ok")
    for v in ("g-pick", "g-quoted"):
        c.git("revert", "--no-edit", g[v])
    c.git("revert", "--no-edit", g["g-bob"], who=BOB, by=BOB)
    c.git("revert", "--no-edit", g["g-agent"], who=AGENT, by=AGENT)
    c.git("revert", "--no-edit", g["g-future"], who=AGENT, by=AGENT, adate=future)
    # the agent's copies
    c.git("cherry-pick", y["q-pick"], who=AGENT, by=AGENT)
    c.git("commit", "-q", "--amend", "-m", "approved upstream", who=AGENT, by=AGENT)
    for v in ("g-pick", "g-bob"):
        c.git("cherry-pick", g[v], who=AGENT, by=AGENT)
        c.git("commit", "-q", "--amend", "-m", "gate approved upstream", who=AGENT, by=AGENT)
    c.git("cherry-pick", g["g-quoted"], who=AGENT, by=AGENT)
    path = lab.repo / "plans" / "g-quoted" / "PLAN.yml"
    path.write_text(path.read_text().replace("  status: approved\n", '  status: "approved"\n'))
    lab.git("add", "-A")
    c.git("commit", "-q", "--amend", "--no-edit", who=AGENT, by=AGENT)
    # honest comebacks
    c.set("q-agent", "approved", who=BOB, msg="approve again")
    c.set("q-carol", "approved", who=CAROL, msg="approve")
    c.set("q-future", "approved", who=BOB, msg="Update PLAN.yml", by=FORGE)
    for v in ("g-agent", "g-future"):
        c.set(v, "approved", msg="Update PLAN.yml", by=FORGE)
    c.run()
    c.run()
    # round 67: the refusal is a controller commit after the agent's lapse; approve again
    lab.refused = {v: lab.codes(v) for v in AGAIN}  # type: ignore[attr-defined]
    for v in AGAIN:
        who = BOB if v.startswith("q-") else ALICE
        c.set(v, "approved", who=who, msg="Update PLAN.yml", by=FORGE)
    c.run()
    # Alice's vote again: since round 69 the refusal kept her collected vote (it ran already)
    c.set("q-future", "approved", msg="approve q-future again")
    c.run()
    c.run()
    lab.status()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r66-quorumgate", _build)


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_a_lapsed_vote_or_gate_approval_brought_back_by_another_hand_does_not_count(
    lab: Lab, vid: str
) -> None:
    if vid.startswith("g-"):
        assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]  # action 1, before the gate
        assert lab.calls(f"{vid}-gated") == [], lab.codes(vid)[:1500]
        assert _kinds(lab, vid, "gate") == [], _kinds(lab, vid, "gate")
    else:
        assert lab.calls(vid) == [], lab.codes(vid)[:1500]
        assert _kinds(lab, vid, "approve") == [], _kinds(lab, vid, "approve")


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_a_new_decision_after_a_lapse_counts(lab: Lab, vid: str) -> None:
    if vid.startswith("g-"):
        assert len(lab.calls(f"{vid}-gated")) == 1, lab.codes(vid)[:1500]
        runs = _kinds(lab, vid, "gate")
        assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs
    else:
        assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
        assert len(_kinds(lab, vid, "approve")) == 1, lab.report  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", AGAIN)
def test_a_web_approval_right_after_the_agents_lapse_is_refused_once_with_the_remedy(
    lab: Lab, vid: str
) -> None:
    refused = lab.refused[vid]  # type: ignore[attr-defined]
    assert "E_APPROVAL_REPLAYED" in refused, refused[:1500]
    assert "one dated after this refusal counts, whoever commits it" in refused, refused[:1500]
