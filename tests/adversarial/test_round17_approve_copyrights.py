"""Round 17, who may reject or abort: withdraw rights claimed by *copying* the plan.

docs/approvals.md: rejections and aborts "count only from an allowed approver or an author
of the plan"; the author index "keeps, per hash, everyone who ever wrote that exact hashed
content on any path" (so a copy's writer is a producer of the original's version too).
Round 16 fixed a non-approver's veto of a version *everywhere* through her own copy (she
rejected the copy). Here she withdraws the *original* itself, after a copy made her a
producer of its content.

Config: the bench's (approvers Alice and ``*@ops.example.com``; Mallory is no approver).
The agent writes each plan; the controller freezes it.

- ``rej``: Mallory copies ``plans/rej`` byte for byte to ``plans/rej-mine`` (her commit), then
  sets ``plans/rej`` to ``rejected`` (her commit); Alice approves ``plans/rej``.
- ``abort``: a gated plan, Alice approves, action 1 runs, the gate pauses; Mallory copies it
  to ``plans/abort-mine`` and sets ``plans/abort`` to ``aborted``; Alice approves the gate.

Defence: Mallory is not an author of the agent's plan: her withdrawal is ignored
(``E_APPROVER_NOT_ALLOWED``) and Alice's approval runs it (``rej`` once; ``abort``'s gated
action once). Control: ``ctl``: Bob (an approver) rejects; nothing runs.

Results: both held (Mallory's withdrawals changed nothing: ``rej`` ran once on Alice's
approval, ``abort``'s gated action once on her gate approval); the control stayed rejected.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _copy(lab: Lab, slug: str) -> None:
    shutil.copytree(lab.repo / "plans" / slug, lab.repo / "plans" / f"{slug}-mine")
    lab.commit(f"my copy of {slug}", MALLORY)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("rej", plan_text("rej"))
    lab.write("ctl", plan_text("ctl"))
    lab.write("abort", plan_text("abort", extra_actions=GATE.format(tag="abort")))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    lab.approve("abort", ALICE)
    lab.run()  # action 1, then the gate
    _copy(lab, "rej")
    lab.set_status("rej", "rejected")
    lab.commit("reject rej", MALLORY)
    lab.set_status("ctl", "rejected")
    lab.commit("reject ctl", BOB)
    _copy(lab, "abort")
    lab.set_status("abort", "aborted")
    lab.commit("abort abort", MALLORY)
    lab.run()
    lab.approve("rej", ALICE)
    lab.approve("abort", ALICE)
    lab.approve("ctl", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r17-copyrights", _build)


def test_control_an_approvers_rejection_holds(lab: Lab) -> None:
    assert lab.calls("ctl") == [], lab.codes("ctl")


def test_the_gate_paused_after_action_one(lab: Lab) -> None:
    assert len(lab.calls("abort")) == 1, lab.codes("abort")


@pytest.mark.parametrize(
    "vid,tag",
    [
        pytest.param(v, t, id=v, marks=BROKEN.get(v, []))
        for v, t in [("rej", "rej"), ("abort", "abort-gated")]
    ],
)
def test_a_copier_cannot_withdraw_the_original(lab: Lab, vid: str, tag: str) -> None:
    assert len(lab.calls(tag)) == 1, lab.codes(vid)
