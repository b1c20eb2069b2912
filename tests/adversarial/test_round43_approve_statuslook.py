"""Round 43, round 42's fresh exemption "a commit that changed nothing in a nested (or pinned)
plan file but one plain ``status: <state>`` line makes its committer no writer of the
folders above", fed lines that LOOK like the status line but are not ``plan.status``, and
``plangate check``'s prediction of rounds 41/42's folder-writer rules.

Every variant ``plans/<vid>`` is the agent's parent plan. Alice (an allowed approver) makes
one commit below its folder (or in the library it pins); the controller passes; then the
agent opens a branch ``pr-<vid>`` that sets the parent ``approved``, ``plangate check --as
alice@example.com`` predicts the merge, and Alice merges it (the merge is the approval).

Status look-alikes (Alice changes ONE line, which reads ``status: <state>``, but it is not
the nested plan's ``plan.status``, which stays ``pending_approval``):

- ``inputs-status``: the child ``child/PLAN.yml`` has a top-level ``inputs:`` block whose
  ``  status: pending_approval`` line is byte-identical to the plan's status line; Alice
  turns the INPUT into ``approved`` (hashed content: a new version of the child).
- ``meta-status``: the same line in the child's ``metadata:`` block (not hashed).
- ``param-status``: an action param ``status: pending_approval`` (6 spaces) in the child.
- ``notes-status``: ``child/notes.yml`` (no plan file) holding ``status: pending_approval``.
- ``pin-meta-status``: the agent's library ``plans/pin-meta-status-lib`` (pinned by the
  parent) has the line in its ``metadata:`` block; Alice changes only that line (the pin
  still holds: metadata is not hashed).

Rounds 41/42 rules, for ``plangate check``:

- ``chk-note``: Alice commits ``child/NOTES.md`` below the parent (round 41).
- ``chk-status-comment``: Alice approves the agent's nested plan and adds a comment line to
  it in the same commit (round 42).
- ``ctl-status``: Alice only approves the agent's nested plan (status line only): control,
  the parent runs once.

Asserted (the defence): the parent never runs and ``E_SELF_APPROVAL`` is named (control:
runs once); ``plangate check`` predicts ``start`` exactly when the controller started the
parent; a fresh clone's ``plangate audit`` agrees with what ran.

Seen: all held (the look-alike lines are no status change: ``E_SELF_APPROVAL`` for Alice;
``check`` predicted the refusals; the control ran once). The same bench with Alice's draft
moved below the parent broke ``check``: ``test_round43_approve_checkcarry.py``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import checkkit
import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

LINE = "status: pending_approval"
LOOK = ["inputs-status", "meta-status", "param-status", "notes-status", "pin-meta-status"]
RULES = ["chk-note", "chk-status-comment"]
VIDS = [*LOOK, *RULES]
ALL = [*VIDS, "ctl-status"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 43: " + why)


def _last_line(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    i = text.rindex(old)
    path.write_text(text[:i] + new + text[i + len(old) :], encoding="utf-8")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("pin-meta-status-lib", plan_text("pin-meta-status-lib") + f"metadata:\n  {LINE}\n")
    lab.commit("agent library", AGENT)
    res = lab.cli("hash", "plans/pin-meta-status-lib", cwd=lab.repo)
    digest = res.stdout.strip().split()[-1]
    lab.write(
        "pin-meta-status", checkkit.pinning("pin-meta-status", "plans/pin-meta-status-lib", digest)
    )
    for vid in [v for v in ALL if v != "pin-meta-status"]:
        lab.write(vid, plan_text(vid))
    lab.write("inputs-status/child", plan_text("inputs-status-child") + f"inputs:\n  {LINE}\n")
    lab.write("meta-status/child", plan_text("meta-status-child") + f"metadata:\n  {LINE}\n")
    lab.write("param-status/child", plan_text("param-status-child", params=LINE + "\n"))
    lab.write("notes-status/child", f"{LINE}\n", filename="notes.yml")
    for vid in ["chk-status-comment", "ctl-status"]:
        lab.write(f"{vid}/child", plan_text(f"{vid}-child"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    # Alice's one commit per variant
    for vid, sub in [
        ("inputs-status", "inputs-status/child/PLAN.yml"),
        ("meta-status", "meta-status/child/PLAN.yml"),
        ("param-status", "param-status/child/PLAN.yml"),
        ("notes-status", "notes-status/child/notes.yml"),
        ("pin-meta-status", "pin-meta-status-lib/PLAN.yml"),
    ]:
        _last_line(lab.repo / "plans" / sub, LINE, "status: approved")
        lab.commit(f"alice: {vid}", ALICE)
    (lab.repo / "plans/chk-note/child").mkdir(parents=True)
    (lab.repo / "plans/chk-note/child/NOTES.md").write_text("alice: reviewed\n")
    lab.commit("alice notes", ALICE)
    lab.set_status("chk-status-comment/child", "approved")
    p = lab.repo / "plans/chk-status-comment/child/PLAN.yml"
    p.write_text(p.read_text() + "# alice: reviewed\n")
    lab.commit("alice approves the child, with a comment", ALICE)
    lab.set_status("ctl-status/child", "approved")
    lab.commit("alice approves the child", ALICE)
    lab.run()
    lab.run()
    time.sleep(1.05)
    checkkit.ask_in_prs(lab, ALL)
    checkkit.predict(lab, root, ALL)
    time.sleep(1.05)
    checkkit.merge_as_alice(lab, ALL)
    checkkit.audit_in_clone(lab, root)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-statuslook", _build)


RUNS = {"pin-meta-status": "pin-meta-status-lib"}


def _ran(lab: Lab, vid: str) -> int:
    return len(lab.calls(RUNS.get(vid, vid)))


def test_control_runs_once(lab: Lab) -> None:
    assert _ran(lab, "ctl-status") == 1, lab.codes("ctl-status")


@pytest.mark.parametrize("vid", checkkit.params(VIDS, FOUND))
def test_a_writer_below_the_parent_cannot_approve_it(lab: Lab, vid: str) -> None:
    assert _ran(lab, vid) == 0, lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", checkkit.params(ALL, FOUND, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid)
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(vid), json.dumps(mine)[:2000]


@pytest.mark.parametrize("vid", checkkit.params(ALL, FOUND, "audit-"))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    runs = checkkit.audited(lab, vid)
    assert len(runs) == int(lab.started(vid)), lab.audit_report  # type: ignore[attr-defined]
    assert all(e.get("approval_valid") for e in runs), runs
