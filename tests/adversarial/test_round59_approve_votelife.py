"""Round 59, quorum: what becomes of a collected vote when the version goes away and comes
back, or when the voter later becomes a writer of the plan's folder.

docs/approvals.md, "Policy: quorum, groups, risk": "Any change to the hashed content voids
them: the plan is frozen again and collection starts from zero", and "Each collected vote is
judged again, from its commit, under the policy in force when the next approval is decided,
with every §5 check" (a vote by someone ``allow_self_approval: false`` now makes an author no
longer counts). "Who changed the content": whoever commits any file into a plan's folder is a
writer of the plan that folder holds.

Config: ``approval.rules: [{match: {paths: ["plans/**"]}, require: [{count: 2}]}]``. The agent
commits one plan per variant; a pass freezes them; Alice approves all (``partial``); then:

- ``aba``: the agent changes a param (version B, frozen again), then changes it back (version
  A again, frozen again); Bob approves. Alice's vote was voided by B: Bob's alone is partial.
- ``aba-revert``: the same, back to A with ``git revert`` of the agent's edit.
- ``writer-after``: Alice commits ``notes.md`` into the plan's folder (no hashed change);
  Bob approves. Re-judged, her vote is a writer's: partial.
- ``writer-after-co``: the agent commits ``notes.md`` with ``Co-authored-by: Alice``; Bob
  approves.
- ``agent-note`` (control): the agent commits ``notes.md`` into the folder; Bob approves:
  it starts (Alice + Bob).
- ``plain`` (control): Bob approves: it starts.

Asserted: the controls run once and the audit lists them valid; the others do not run (the
quorum is not met by distinct, allowed non-writers for that version) and the audit lists no
valid run.

Seen: see BROKEN below.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared

VIDS = ["aba", "aba-revert", "writer-after", "writer-after-co"]
CONTROLS = ["agent-note", "plain"]
BROKEN: dict[str, object] = {}


def _edit(lab: Lab, v: str, old: str, new: str) -> None:
    path = lab.repo / "plans" / v / "PLAN.yml"
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new, 1))


def _build(root: Path) -> Lab:
    lab = Lab(
        root, approval='rules:\n  - match: {paths: ["plans/**"]}\n    require: [{count: 2}]\n'
    )
    for v in VIDS + CONTROLS:
        lab.write(v, plan_text(v, params='target: "a"\n'))
    lab.commit("agent's plans", AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS + CONTROLS:
        lab.set_status(v, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.partial = {v: lab.plan(v).get("approval") for v in VIDS + CONTROLS}  # type: ignore[attr-defined]
    for v in ("aba", "aba-revert"):
        _edit(lab, v, 'target: "a"', 'target: "b"')
    lab.commit("agent: version B", AGENT)
    edit_b = lab.head()
    (lab.repo / "plans" / "writer-after" / "notes.md").write_text("alice: looks fine\n")
    lab.commit("alice: a note", ALICE)
    (lab.repo / "plans" / "writer-after-co" / "notes.md").write_text("pairing notes\n")
    lab.commit("agent: notes\n\nCo-authored-by: Alice <alice@example.com>", AGENT)
    (lab.repo / "plans" / "agent-note" / "notes.md").write_text("agent: notes\n")
    lab.commit("agent: a note", AGENT)
    lab.run()
    _edit(lab, "aba", 'target: "b"', 'target: "a"')
    lab.commit("agent: back to version A", AGENT)
    lab.git("revert", "--no-edit", edit_b, who=AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS + CONTROLS:
        lab.set_status(v, "approved")
    lab.commit("bob approves", BOB)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-votelife", _build)


def test_alices_first_vote_was_partial(lab: Lab) -> None:
    for v, block in lab.partial.items():  # type: ignore[attr-defined]
        assert block and block.get("status") == "partial", (v, block)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_a_void_or_writers_vote_does_not_complete_the_quorum(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", CONTROLS)
def test_the_controls_run_on_alice_and_bob(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]
