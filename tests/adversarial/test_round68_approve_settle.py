"""Round 68, approval side: round 67's merge settlements (docs/approvals.md, "Who changed the
content": a file under the plans folder that git's default merge conflicted at is the sides'
writing when ``git merge-file --ours/--theirs/--union`` over the stages git used makes it byte
for byte, for at most 64 such paths of one merge).

Lab (one, local mode, fake dates): the agent commits one ``rec`` plan per id with notes in
its folder (``NOTES.md``, twelve lines; ``UNION.md`` where a committed ``.gitattributes`` says
``merge=union``); a pass freezes them. Per id a branch and a merge whose notes conflict at line
1 (the PLAN.yml never changes: the frozen version is the one she approves); then Alice
approves every plan in one commit, and two passes.

Slips tried (asserted: never ran, no valid run in either audit; her approval refused):

- ``pick-theirs``: Alice cherry-picks the agent's note edit onto her branch (author the
  agent, committer Alice: a writer by the committer rule); the agent merges her branch
  ``-X theirs`` (its main edits line 10 too, so the result is no blob of a side).
- ``pick-union``: the same through ``UNION.md`` (``merge=union``).
- ``hers-union``: Alice writes line 1 of ``UNION.md`` herself on her branch; the agent's union
  merge keeps her line beside its own.
- ``mm-ours``: Alice's branch is her merge of two agent branches with a line she resolved
  by hand (line 5); the agent merges her branch ``-X ours`` (line 1 conflicts, ours kept;
  her line 5 comes through clean).
- ``mm-clean``: the control of ``mm-ours``: the same branch merged with no conflict on main
  (no settlement), to tell the settlement from the merged branch's merge.
- ``mm-line``: the control of both: Alice's same hand-resolved merge of the two agent
  branches made on main itself (the first-parent line).

Honest (asserted: ran once, hers, both audits valid):

- ``rename-theirs``: the agent's branch moves ``NOTES.md`` to ``OLD-NOTES.md`` in the folder
  and edits line 1; main edits line 1 and 10; Alice merges ``-X theirs``.
- ``b64-out``: 64 conflicting notes in the plan's folder (the budget exactly) plus 2
  conflicting files OUTSIDE the plans folder (``docs/``, not "such paths"), Alice merges
  ``-X theirs``.
- ``cross-theirs``: a criss-cross (both sides merged each other's first edits) then a line-1
  conflict, Alice merges ``-X theirs`` (a virtual base).

Seen (round 68): ``mm-ours`` and ``mm-clean`` BROKE (slip), and not through a settlement:
Alice's merge of two agent branches on HER branch, resolved by her hand (line 5 is hers),
merged into main by the agent (``-X ours`` over a line-1 conflict, or a clean ``--no-ff``
merge): her bytes are in the plan's NOTES.md and her approval ran (approver alice), both
audits valid. The same merge made on main (``mm-line``) is ``E_SELF_APPROVAL``. Should: a
merge on a merged branch is judged as one on the line (what it wrote itself is its maker's).
Held: ``pick-theirs``, ``pick-union`` (the agent's commit with Alice as committer on her
side: she is a writer through every settlement), ``hers-union``; honest ``rename-theirs``,
``b64-out`` (64 settled plan paths, two more outside the plans folder not counted),
``cross-theirs``. The fresh-clone audit agreed with the controller on every id.

Fixed (2026-11-30): ``mm-ours`` and ``mm-clean`` never run, ``E_SELF_APPROVAL``, both audits
agree. One notion of who wrote a file for every commit the history brings: a merge ON A
MERGED BRANCH is judged by rounds 65-67's rule as one on the first-parent line is (what it
did not bring, as a side's blob, git's clean join or a hands-off settlement of its parents,
it wrote: its makers are writers), where only the merged non-merge commits' makers counted
before (``GitRepo.merges_merged_in``, ``Lifecycle._side_merge_writes``, ``_side_writes``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, valid_runs
from policykit import NOTE_LINES, StepClock, edit_note, with_audits
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

SLIPS = ["pick-theirs", "pick-union", "hers-union", "mm-ours", "mm-clean", "mm-line"]
HONEST = ["rename-theirs", "b64-out", "cross-theirs"]
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    g = StepClock(lab)
    (lab.repo / ".gitattributes").write_text("plans/**/UNION.md merge=union\n")
    for v in [*SLIPS, *HONEST]:
        lab.write(v, plan(v))
        edit_note(lab, f"plans/{v}/NOTES.md")
        edit_note(lab, f"plans/{v}/UNION.md")
    for i in range(64):
        edit_note(lab, f"plans/b64-out/n{i:02}.md")
    for i in range(2):
        edit_note(lab, f"docs/d{i:02}.md")
    g.commit("agent plans and notes")
    g.run()
    # --- slips
    for v, name in (("pick-theirs", "NOTES.md"), ("pick-union", "UNION.md")):
        g("checkout", "-q", "-b", f"agent/{v}", "main")
        edit_note(lab, f"plans/{v}/{name}", l1="agent side")
        c = g.commit("agent: note")
        g("checkout", "-q", "-b", f"alice/{v}", "main")
        g("cherry-pick", c, who=ALICE)  # committer Alice, author the agent
        g("checkout", "-q", "main")
        edit_note(lab, f"plans/{v}/{name}", l1="agent main", l10="agent main 10")
        g.commit("agent: note on main")
        opts = ["-X", "theirs"] if name == "NOTES.md" else []
        g("merge", "-q", "--no-ff", *opts, "-m", f"merge alice/{v}", f"alice/{v}")
    g("checkout", "-q", "-b", "alice/hers-union", "main")
    edit_note(lab, "plans/hers-union/UNION.md", l1="alice wrote this")
    g.commit("alice: a note", who=ALICE)
    g("checkout", "-q", "main")
    edit_note(lab, "plans/hers-union/UNION.md", l1="agent main")
    g.commit("agent: note on main")
    g("merge", "-q", "--no-ff", "-m", "merge alice/hers-union", "alice/hers-union")
    # mm-ours: her hand-resolved merge of two agent branches, merged by the agent -X ours;
    # mm-clean: the same with no conflict on main (a clean merge: the control)
    for v in ("mm-ours", "mm-clean"):
        note = f"plans/{v}/NOTES.md"
        g("checkout", "-q", "-b", f"agent/{v}-a", "main")
        edit_note(lab, note, l5="agent a", l1="agent side")
        g.commit("agent: a")
        g("checkout", "-q", "-b", f"agent/{v}-b", "main")
        edit_note(lab, note, l5="agent b")
        g.commit("agent: b")
        g("checkout", "-q", "-b", f"alice/{v}", f"agent/{v}-a")
        g("merge", "-q", f"agent/{v}-b", who=ALICE, check=False)
        (lab.repo / note).write_text("".join(
            ["agent side\n", *NOTE_LINES[1:4], "alice resolved this by hand\n", *NOTE_LINES[5:]]
        ))  # fmt: skip
        g.commit("alice: merge a and b", who=ALICE)
        g("checkout", "-q", "main")
        if v == "mm-ours":
            edit_note(lab, note, l1="agent main")
            g.commit("agent: note on main")
        g("merge", "-q", "--no-ff", "-X", "ours", "-m", f"merge alice/{v}", f"alice/{v}")
    # mm-line: her hand-resolved merge on main itself
    note = "plans/mm-line/NOTES.md"
    for side, l5 in (("a", "agent a"), ("b", "agent b")):
        g("checkout", "-q", "-b", f"agent/mm-line-{side}", "main")
        edit_note(lab, note, l5=l5)
        g.commit(f"agent: {side}")
        g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "a", "agent/mm-line-a")
    g("merge", "-q", "agent/mm-line-b", who=ALICE, check=False)
    (lab.repo / note).write_text(
        "".join([*NOTE_LINES[:4], "alice resolved this by hand\n", *NOTE_LINES[5:]])
    )
    g.commit("alice: merge b", who=ALICE)
    # --- honest
    g("checkout", "-q", "-b", "agent/rename-theirs", "main")
    g("mv", "plans/rename-theirs/NOTES.md", "plans/rename-theirs/OLD-NOTES.md")
    edit_note(lab, "plans/rename-theirs/OLD-NOTES.md", l1="agent side")
    g.commit("agent: move the note")
    g("checkout", "-q", "main")
    edit_note(lab, "plans/rename-theirs/NOTES.md", l1="agent main", l10="agent main 10")
    g.commit("agent: note on main")
    g("merge", "-q", "--no-ff", "-X", "theirs", "-m", "merge", "agent/rename-theirs", who=ALICE)
    for v, outside in (("b64-out", 2),):
        g("checkout", "-q", "-b", f"agent/{v}", "main")
        for i in range(64):
            edit_note(lab, f"plans/{v}/n{i:02}.md", l1="agent side")
        for i in range(outside):
            edit_note(lab, f"docs/d{i:02}.md", l1="agent side")
        g.commit("agent: notes")
        g("checkout", "-q", "main")
        for i in range(64):
            edit_note(lab, f"plans/{v}/n{i:02}.md", l1="agent main", l10="agent main 10")
        for i in range(outside):
            edit_note(lab, f"docs/d{i:02}.md", l1="agent main", l10="agent main 10")
        g.commit("agent: notes on main")
        g("merge", "-q", "--no-ff", "-X", "theirs", "-m", f"merge agent/{v}", f"agent/{v}",
          who=ALICE)  # fmt: skip
    # cross-theirs: a criss-cross, then a conflict at line 1
    g("checkout", "-q", "-b", "agent/x1", "main")
    edit_note(lab, "plans/cross-theirs/NOTES.md", l3="x1")
    g.commit("agent: x1")
    g("checkout", "-q", "-b", "agent/x2", "main")
    edit_note(lab, "plans/cross-theirs/NOTES.md", l7="x2")
    g.commit("agent: x2")
    g("checkout", "-q", "agent/x1")
    g("merge", "-q", "--no-ff", "-m", "x1+x2", "agent/x2~0")
    x1m = lab.head()
    g("checkout", "-q", "agent/x2")
    g("merge", "-q", "--no-ff", "-m", "x2+x1", "agent/x1~1")
    g("checkout", "-q", "agent/x1")
    edit_note(lab, "plans/cross-theirs/NOTES.md", l1="x1 side", l3="x1 again")
    g.commit("agent: x1 line 1")
    g("checkout", "-q", "agent/x2")
    edit_note(lab, "plans/cross-theirs/NOTES.md", l1="x2 side", l7="x2 again")
    g.commit("agent: x2 line 1")
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "agent/x2", "agent/x2")
    g("merge", "-q", "--no-ff", "-X", "theirs", "-m", "merge agent/x1", "agent/x1", who=ALICE)
    lab.crossed = x1m  # type: ignore[attr-defined]
    for v in [*SLIPS, *HONEST]:
        lab.set_status(v, "approved")
    g.commit("approve", who=ALICE)
    g.run()
    g.run()
    return with_audits(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r68-settle", _build)


@pytest.mark.parametrize("vid", cases(SLIPS, SLIPS, BROKEN))  # type: ignore[arg-type]
def test_a_settlement_never_hides_her_hand(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_an_honest_settled_merge_leaves_her_free_to_approve(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", [*SLIPS, *HONEST])
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
