"""Round 57, self-approval: the SOURCE of a move diluted first. The agent pads an approver's
draft (in her own folder) with content of its own, then moves her plan out with the padding
dropped again and one param added.

docs/approvals.md, "Who changed the content": a plan moved with an edit keeps its source's
writers when the new plan keeps at least half of the REMOVED plan's content
(``likeness.kept_share``: the weight of the removed plan's leaves found unchanged, over the
removed plan's weight; what the new plan adds does not dilute her). Round 56 measured the
share over the removed plan so an addition at the destination cannot dilute; this module
adds the weight on the other side, to the removed plan, one commit earlier, where it costs
the agent nothing (the draft is not the agent's to approve anyway, and a co-writer of a
draft is nobody's problem). The new plan is then ALL her text (her whole original plan plus
one param), while it keeps under half of what the commit removed.

Config: the bench's. Alice commits ``plans/<v>-her`` (``draft``, one action ``rec`` with her
tag and a reason). The agent then:

- ``pad-params``: commits 14 params of its own into her action (her folder); then ONE commit
  removes her folder and adds ``plans/pad-params`` = her original text, one param added
  (``region``), ``pending_approval``.
- ``pad-actions``: commits 7 actions of its own after hers; then the same move.
- ``pad-over``: the padded draft; then her original text (+ ``region``) written over the
  agent's own frozen plan file ``plans/pad-over`` in the commit that removes her folder
  (round 56's in-place shape).
- ``pad-pr``: ``pad-params``'s move made on a branch and merged ``--no-ff`` by the agent.
- ``pad-exact`` (control): the padded draft; then her exact original bytes as the new plan
  (status ``pending_approval`` as her only change: her content by hash).
- ``nopad`` (control): no padding, the move with ``region`` added (round 55's shape).

A pass; Alice approves each ``plans/<v>``; two passes; ``plangate audit --json``.

Asserted (the defence): her tag never reaches ``rec``, the plan is refused ``E_SELF_APPROVAL``,
the audit lists no valid run. The agent's own plan ``own`` (control) runs once on Alice's
approval.

Seen: ``pad-params``, ``pad-actions``, ``pad-over`` and ``pad-pr`` broke: each ran ``rec``
with her tag (``completed``, approver alice) and the audit lists the run valid. The share is
measured over the removed plan as it stood at the move, padding included, though the padding
was the agent's and is exactly what the move dropped. ``pad-exact`` held (her content by
hash), ``nopad`` held (round 55's move), ``own`` ran once. Fix direction: measure the share
over the removed plan's leaves that its OTHER writers did not write (or over the new plan:
how much of the new plan is her text), i.e. the writers of each leaf, not of the file.

Fixed (2026-11-29): the content pairing is measured both ways
(``likeness.made_share``): the share of the removed plan kept, or the share of the NEW plan
that is the removed plan's unchanged content, whichever is more. The new plan is all her text
but ``region``: 0.78 of it is hers (``pad-params`` and ``pad-actions``; 0.2 of the padded
draft kept), over 0.5, so she is a writer however much the agent padded the draft first
(``Lifecycle._moved_writers``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared
from writerkit import Flow, her_drafts, reworked

PADDED = ["pad-params", "pad-actions", "pad-over", "pad-pr", "pad-exact"]
VIDS = [*PADDED, "nopad"]
BROKEN: dict[str, object] = {}


def hers(v: str, status: str = "draft") -> str:
    return plan_text(
        f"{v}-her",
        status=status,
        name=f"alice rotates {v}",
        params='reason: "alice: rotate the signing key of the billing service"\n',
    )


def edited(v: str) -> str:
    return hers(v, "pending_approval") + '      region: "eu-west-1"\n'


def pad_params(v: str) -> str:
    extra = "".join(f'agent_check_{i}: "agent value {i} for {v}"\n' for i in range(14))
    return plan_text(
        f"{v}-her",
        status="draft",
        name=f"alice rotates {v}",
        params='reason: "alice: rotate the signing key of the billing service"\n' + extra,
    )


def pad_actions(v: str) -> str:
    body = hers(v)
    for i in range(2, 9):
        body += (
            f'  - id: {i}\n    tool: echo\n    why: "agent step {i}: check {v} part {i}"\n'
            f'    params:\n      message: "agent message {i} about {v}"\n'
        )
    return body


def _rework(flow: Flow) -> None:
    pads = {f"{v}-her": pad_params(v) for v in ["pad-params", "pad-over", "pad-pr", "pad-exact"]}
    pads["pad-actions-her"] = pad_actions("pad-actions")
    flow.commit("agent adds its checks to the drafts", AGENT, pads)
    plans = {v: edited(v) for v in ["pad-params", "pad-actions", "nopad", "pad-over"]}
    plans["pad-exact"] = hers("pad-exact", "pending_approval")
    flow.rework(plans, message="agent moves the drafts into plans")
    flow.merged({"pad-pr": edited("pad-pr")})


def _build(root: Path) -> Lab:
    own = {
        "pad-over": plan_text("pad-over-agent", name="agent's own plan"),
        "own": plan_text("own", name="agent's own"),
    }
    return reworked(Flow(Lab(root)), her_drafts(VIDS, hers), own, _rework, [*VIDS, "own"])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-dilute", _build)


def _valid_runs(lab: Lab, v: str) -> list[dict]:  # type: ignore[type-arg]
    return valid_runs(lab.report, v)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_text_out_of_a_padded_draft_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:800]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_fresh_clone_audit_lists_no_valid_run(lab: Lab, vid: str) -> None:
    assert _valid_runs(lab, vid) == [], _valid_runs(lab, vid)


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert _valid_runs(lab, "own"), lab.report  # type: ignore[attr-defined]
