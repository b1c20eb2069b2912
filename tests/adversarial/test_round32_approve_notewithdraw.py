"""Round 32, who may reject or abort: withdraw rights gained by writing into a plan's folder
without writing its content (a note in the plan's folder, a note in a pinned library's
folder, a co-author of a note commit).

docs/approvals.md: a writer of the folder may not *approve* the plan; withdrawals count "by
an allowed approver or an author of the plan" (an author "who wrote that version"). Round 22
held a note made before the plan existed. Config: the bench's. The agent writes every plan
and library; Mallory is no approver and writes no plan content. After the controller froze
them (and Alice opened the ``*-abort`` plans, which pause at their gated action):

- ``note-own``: Mallory commits ``NOTES.md`` into the plan's folder, then rejects it.
- ``note-lib``: she commits ``NOTES.md`` into the folder of the library the plan pins, then
  rejects the parent.
- ``co-note``: the agent commits ``NOTES.md`` with ``Co-authored-by: Mallory``; she rejects.
- ``note-abort`` / ``note-lib-abort``: as ``note-own`` / ``note-lib`` on a plan paused at its
  gate; she aborts it.
- ``ctl``: Mallory rejects without having written anything (control).

Then Alice approves the plans (Bob the gates). Asserted: Mallory's withdrawal is ignored: each
plan (and its gated action, and the pinned library) runs once.

Results: every variant held.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

GATE = """\
  - id: {n}
    tool: rec
    why: "gated"
    requires_approval: true
    params:
      tag: "{t}-gated"
"""
REJ = ["note-own", "note-lib", "co-note", "ctl"]
ABORT = ["note-abort", "note-lib-abort"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _parent(lab: Lab, vid: str, gate: bool) -> None:
    lab.write(f"{vid}-lib", plan_text(f"{vid}-lib", status="draft"))
    out = lab.cli("hash", str(lab.repo / "plans" / f"{vid}-lib")).stdout.split()
    body = plan_text(vid) + f'  - id: 2\n    plan: {{path: plans/{vid}-lib, hash: "{out[0]}"}}\n'
    body += '    why: "the library"\n'
    lab.write(vid, body + (GATE.format(n=3, t=vid) if gate else ""))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in ["note-own", "co-note", "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.write("note-abort", plan_text("note-abort", extra_actions=GATE.format(n=2, t="note-abort")))
    _parent(lab, "note-lib", gate=False)
    _parent(lab, "note-lib-abort", gate=True)
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid in ABORT:
        lab.approve(vid, ALICE)
    lab.run()
    for folder in ["note-own", "note-abort", "note-lib-lib", "note-lib-abort-lib"]:
        lab.write(folder, "mallory's note\n", "NOTES.md")
        lab.commit(f"note in {folder}", MALLORY)
    lab.write("co-note", "a note\n", "NOTES.md")
    lab.commit("note\n\nCo-authored-by: Mallory <mallory@example.com>\n", AGENT)
    lab.run()
    for vid in REJ + ABORT:
        status = "aborted" if vid in ABORT else "rejected"
        lab.set_status(vid, status)
        lab.commit(f"mallory: {status} {vid}", MALLORY)
    lab.run()
    for vid in REJ:
        lab.approve(vid, ALICE)
    for vid in ABORT:
        lab.approve(vid, BOB)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r32-notewithdraw", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(REJ))
def test_a_note_writers_rejection_is_ignored(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    if vid == "note-lib":
        assert len(lab.calls("note-lib-lib")) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p(ABORT))
def test_a_note_writers_abort_is_ignored(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-gated")) == 1, lab.codes(vid)
