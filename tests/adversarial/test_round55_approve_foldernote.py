"""Round 55, honest approvals wrongly refused: a review note an approver once committed in a
plan folder that was later REMOVED makes her a writer of every later plan at that path.

docs/approvals.md, "Who changed the content": "Whoever commits any file into a plan's folder
(notes, a draft, a patch, anything but the status change of an approval) is a writer of the
plan that folder holds or will hold". Round 54 fixed the same reuse for scratch paths ("a
path she deleted before the agent reused it" held), and a plan the approver herself WROTE at
a path that was removed does not make her a writer of the next plan there: only her note
does. Recurring plans reuse their folder names (``plans/weekly-rotate``), so one review note
there, weeks ago, bars her from approving that recurring plan for good.

Config: the bench's. The agent proposes old plans ``plans/<v>``; per variant:

- ``note``: Alice commits ``plans/<v>/notes.md`` ("looks fine"); Bob approves; it runs.
- ``note-pending``: Alice commits the note; the plan is never approved.
- ``note-archived``: ``note``, and the agent later MOVES the finished folder (her note with
  it) to ``archive/`` instead of removing it.
- ``plan`` (control): Alice rewrote the old plan herself; Bob approves; it runs.
- ``note-kept`` (control): ``note``, but the agent's new plan replaces only PLAN.yml and her
  note stays in the folder (she is a writer of what the folder holds: refused is right).

Then the agent removes (``note-archived``: moves) the old folders (``note-kept``: only its
PLAN.yml) in one commit; a pass; in a later commit it writes a brand-new plan of its own at
each path (another name, task and tools); a pass; Alice approves each; two passes;
``plangate audit --json``.

Asserted (the promise): she wrote nothing of the new plan, so her approval runs it once and
the audit finds it valid; for ``note-kept``: ``E_SELF_APPROVAL``, nothing runs.

Seen: ``note``, ``note-pending`` and ``note-archived`` broke (``E_SELF_APPROVAL:
alice@example.com wrote or changed this plan's content``: a note in a folder removed or moved
away earlier); ``plan`` and
``note-kept`` held.

Fixed (2026-11-29): a folder's writers count since it was last emptied (every file of it
gone at a commit, removed or moved away): her note left with the old folder, and the agent's
new plan at that path has only its own writers. ``note-kept`` still refuses her.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BenchError, Lab, cases, plan_text
from test_round2_execution_kit import shared

FRESH = ["note", "note-pending", "note-archived", "plan"]
VIDS = [*FRESH, "note-kept"]
BROKEN: dict[str, object] = {}


def fresh(v: str) -> str:
    extra = "".join(
        f'  - id: {i}\n    tool: echo\n    why: "fresh step {i}"\n    params: {{message: "m{i}"}}\n'
        for i in range(2, 5)
    )
    text = plan_text(v, name=f"brand new {v}", extra_actions=extra)
    return text.replace("  - name: rec\n", "  - name: rec\n  - name: echo\n")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        lab.write(v, plan_text(f"{v}-old", name=f"old {v}"))
    lab.commit("agent: old plans", AGENT)
    lab.write("plan", plan_text("plan-old", name="alice's own old plan"))
    lab.commit("alice rewrites the old plan", ALICE)
    lab.run()
    for v in ("note", "note-pending", "note-archived", "note-kept"):
        (lab.repo / "plans" / v / "notes.md").write_text("looks fine\n")
    lab.commit("alice: review notes", ALICE)
    lab.run()
    time.sleep(1.05)
    for v in ("note", "note-archived", "plan", "note-kept"):
        lab.set_status(v, "approved")
    lab.commit("bob approves", BOB)
    lab.run()
    lab.run()
    for v in ("note", "note-archived", "plan", "note-kept"):
        if not lab.calls(f"{v}-old"):
            raise BenchError(f"the old {v} did not run: {lab.codes(v)[:400]}")
    (lab.repo / "archive").mkdir()
    lab.git("mv", "plans/note-archived", "archive/note-archived")
    for v in ("note", "note-pending", "plan"):
        lab.git("rm", "-q", "-r", f"plans/{v}")
    lab.git("rm", "-q", "plans/note-kept/PLAN.yml", "plans/note-kept/EXECUTION_LOG.md")
    lab.commit("agent: clear the old plans", AGENT)
    lab.run()
    for v in VIDS:
        lab.write(v, fresh(v))
    lab.commit("agent: this week's plans", AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-foldernote", _build)


def _runs(lab: Lab, v: str) -> list[dict]:  # type: ignore[type-arg]
    report = lab.report  # type: ignore[attr-defined]
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{v}" and e.get("plan_hash") == lab.plan(v)["frozen"]["hash"]
    ]


@pytest.mark.parametrize("vid", cases(FRESH, FRESH, BROKEN))  # type: ignore[arg-type]
def test_her_approval_of_a_new_plan_at_an_old_path_runs(lab: Lab, vid: str) -> None:
    if "approval request" not in lab.codes(vid):
        raise BenchError(f"{vid}: no approval was read: {lab.codes(vid)[:400]}")
    assert "E_SELF_APPROVAL" not in lab.codes(vid), lab.codes(vid)
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    runs = _runs(lab, vid)
    assert runs and all(e.get("approval_valid") for e in runs), runs


def test_her_note_still_in_the_folder_makes_her_a_writer(lab: Lab) -> None:
    assert lab.calls("note-kept") == [], lab.codes("note-kept")
    assert "E_SELF_APPROVAL" in lab.codes("note-kept"), lab.codes("note-kept")
    assert _runs(lab, "note-kept") == []
