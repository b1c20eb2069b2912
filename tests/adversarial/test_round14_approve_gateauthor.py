"""Round 14, who may make a plan run: a gate approval (``awaiting_approval`` -> ``approved``)
by someone who wrote part of what runs, through a path a first approval is known to check.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval). Each plan has
``rec`` action 1, then a gated ``rec`` action 2 (``requires_approval``). The first approval is
by someone who did not write the plan; the plan runs action 1 and pauses at the gate; then
the gate is approved by a writer:

- ``gate-pinned``: Bob writes ``plans/gate-pinned-lib`` (a draft meant for nesting); the agent
  writes the parent, whose action 3 pins that library by hash. Alice approves; Bob approves
  the gate (approving the parent approves the pinned version, which Bob wrote).
- ``gate-coauthor``: the agent's commit adding the plan carries ``Co-authored-by: Bob``; Alice
  approves; Bob approves the gate.
- ``gate-notes``: Bob commits ``NOTES.md`` into the plan's folder before the agent adds the
  plan (a writer of the plan that folder will hold); Alice approves; Bob approves the gate.
- ``gate-moved``: Bob writes ``plans/gate-moved-src``; the agent ``git mv``s it to
  ``plans/gate-moved``; Alice approves; Bob approves the gate.
- ``gate-alice-pinned``: Alice writes the library, the agent the parent; Bob approves the
  parent first; Alice approves the gate.

Defence: the gate approval is refused (``E_SELF_APPROVAL``), the gated action never runs.
Control: ``gate-ctl`` (agent's plan, Alice first, Bob at the gate) runs both actions once.

Results: every variant held (each gate approval ``E_SELF_APPROVAL``; a fresh-clone audit lists
only the control's gate run). Tried by hand too: Bob committing ``NOTES.md`` into the folder
*after* the first approval and then approving the gate is refused as well.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import NESTED
from test_round2_execution_kit import shared

GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
PIN = """\
  - id: 3
    plan: {{path: plans/{tag}-lib, hash: "{pin}"}}
    why: "run the library"
"""
LIB = NESTED  # the library plan round 2 pins (same text)
# variant -> (first approver, gate approver)
VIDS = {
    "gate-pinned": (ALICE, BOB),
    "gate-coauthor": (ALICE, BOB),
    "gate-notes": (ALICE, BOB),
    "gate-moved": (ALICE, BOB),
    "gate-alice-pinned": (BOB, ALICE),
}
BROKEN: dict[str, object] = {}


def _gated(tag: str, extra: str = "") -> str:
    return plan_text(tag, extra_actions=GATE.format(tag=tag) + extra)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    # libraries and Bob's own writing first
    lab.write("gate-pinned-lib", LIB.format(tag="gate-pinned"))
    lab.commit("bob's library", BOB)
    lab.write("gate-alice-pinned-lib", LIB.format(tag="gate-alice-pinned"))
    lab.commit("alice's library", ALICE)
    lab.write("gate-notes", "looks useful\n", filename="NOTES.md")
    lab.commit("bob's notes", BOB)
    lab.write("gate-moved-src", _gated("gate-moved"))
    lab.commit("bob drafts a plan", BOB)
    lab.git("mv", "plans/gate-moved-src", "plans/gate-moved")
    lab.commit("agent moves it", AGENT)
    for slug in ("gate-pinned", "gate-alice-pinned"):
        pin = lab.cli("hash", str(lab.repo / "plans" / f"{slug}-lib")).stdout.strip()
        assert pin.startswith("sha256:"), pin
        lab.write(slug, _gated(slug, PIN.format(tag=slug, pin=pin)))
    lab.write("gate-notes", _gated("gate-notes"))
    lab.write("gate-ctl", _gated("gate-ctl"))
    lab.commit("agent adds plans", AGENT)
    lab.write("gate-coauthor", _gated("gate-coauthor"))
    lab.commit("agent adds gate-coauthor\n\nCo-authored-by: Bob <bob@ops.example.com>", AGENT)
    lab.run()  # freeze
    for slug, (first, _) in {**VIDS, "gate-ctl": (ALICE, BOB)}.items():
        lab.approve(slug, first)
    lab.run()  # action 1, then the gate
    for slug, (_, gate) in {**VIDS, "gate-ctl": (ALICE, BOB)}.items():
        lab.approve(slug, gate)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r14-gateauthor", _build)


def test_control_runs_both_actions_once(lab: Lab) -> None:
    assert len(lab.calls("gate-ctl")) == 1, lab.codes("gate-ctl")
    assert len(lab.calls("gate-ctl-gated")) == 1, lab.codes("gate-ctl")


@pytest.mark.parametrize("vid", list(VIDS))
def test_the_first_approval_ran_to_the_gate(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_writer_cannot_approve_the_gate(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-gated") == [], lab.codes(vid)
    assert lab.calls(f"{vid}-nested") == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)
