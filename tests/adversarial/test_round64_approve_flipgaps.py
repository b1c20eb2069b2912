"""Round 64, approval side: round 63's first-parent hold (docs/approvals.md, "The
first-parent line the controller follows": a new tip whose first-parent line put UNREAD
commits that change plans or the policy record behind a second parent is refused,
``E_HISTORY_REWRITTEN``; a ``git pull`` straight onto the tip read, or one whose unread
commits change nothing under the plans folder, is followed) against shapes that hide the
unread decision, and honest pulls.

Lab (one, local mode, dates on a past clock, no sleep). The agent adds the plans; pass 1
freezes them (tip F1); the owner's docs commit; pass 2 (the tip read, S). Before each later
phase the same again: F1 is the tip then, S the owner's docs commit after it, read by a
pass (so no phase hides an earlier phase's controller records: round 29's limit). Then, one
phase at a time (the hold is the whole controller's), each ending with a pass; a pass that holds is
answered by putting main back at the tip read (the remedy's first half; the update is not
merged again):

- ``gap-mergein``: the agent's branch forked at F1 (before S) sets ``gap-mergein``
  ``approved``; the agent merges it ``--no-ff`` into main (unread); Alice's docs branch, forked
  at F1, merges main into itself (``git pull``) and main is fast-forwarded to her merge. The
  only unread commit that changes a plan and descends from S is a MERGE whose own change
  reaches the plan through its second parent; the commit that changed it does not descend
  from S. Asserted: never runs (held, or at least not read as Alice's approval).
- ``gap-octopus``: the agent's ``approved`` on main (unread); Alice's stale docs branch
  makes an OCTOPUS merge of main and another stale branch of hers; main fast-forwarded.
  Asserted: never runs.
- ``gap-descend``: Alice's docs branch (forked at F1, commit D) is merged into main by the
  agent (G, unread); the agent sets ``gap-descend`` ``approved`` on main (U, unread); Alice
  goes on on her branch (D2) and pulls: F = (D2, U), main fast-forwarded. The unread commits
  behind the second parent descend from a commit of the new line (D). Asserted: never runs.
- ``gap-forge``: the same, with her docs pull request merged into main by HER (the forge's
  merge button: G, unread) instead of the agent.
- ``gap-seen``: as ``gap-descend``, with a pass that READ the agent's merge of her branch
  (the tip read is that merge); only the approval after it is unread.
- ``docs-ok`` (honest): Bob's docs commit on main (unread), Alice's stale docs branch
  pulls, fast-forward: followed; Alice approves ``docs-ok`` after every pull (a pull onto
  the tip read still hides the controller's records behind a second parent from a fresh
  clone: round 29's ``_foxaudit`` limit, not tried again): runs once, valid.
- ``forge-ok`` (honest): Alice's review branch forked at F1 approves ``forge-ok``; Alice
  approves ``docs-ok`` on main (unread); the forge's "Update branch" merges main into her
  branch and its merge button merges the branch into main: followed, both run once, valid.
- ``pull-read`` (honest): the agent adds ``pull-read`` on main and a pass freezes it (read);
  Alice's stale docs branch pulls, fast-forward (nothing unread: followed); Alice approves
  ``pull-read``: she wrote nothing of it, so it runs once, valid, credited to her.

Also asserted: the fresh-clone audit lists exactly the runs the controller made.

Seen (FINDINGS.md, round 64): ``gap-descend`` and ``gap-forge`` BROKE: followed, the agent's
plan ran credited to Alice's update merge (approver alice), and the fresh-clone audit calls it
valid. Held:
``gap-mergein``, ``gap-octopus`` and ``gap-seen`` (``E_HISTORY_REWRITTEN``, never run: once
the merge of her branch was read, her D is no unread commit of the new line). Honest:
``docs-ok``, ``pull-read`` and ``forge-ok`` followed and ran once on her approval, valid; the
audit lists exactly the controller's runs.

Fixed (2026-11-29): ``gap-descend`` and ``gap-forge`` are held (``E_HISTORY_REWRITTEN``,
never run). Every commit off the new line that descends from the tip read is unread
(``controller.git.refs.unread_off_line``) except the line's own sides: commits that descend
from a commit of the new line that had the tip read in it. A commit that continues the tip
read's own first-parent line (its first parent is the tip read or such a commit: here the
merge of her branch and the agent's approval after it) is never a side, whatever else it
descends from, nor one that took the tip read otherwise than through the line. Under the
paths, a commit of the branch's own line counts by what it changed against its first parent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text, valid_runs
from policykit import OWNER, Pulls, Who
from test_round2_execution_kit import shared

NEVER = ["gap-mergein", "gap-octopus", "gap-descend", "gap-forge", "gap-seen"]
HONEST = ["docs-ok", "pull-read", "forge-ok"]
BROKEN: dict[str, object] = {}  # gap-descend, gap-forge: fixed (see the docstring)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    clock = Pulls(lab)
    tick, run = clock.tick, clock.run
    note, pull_ff, settle, fork = clock.note, clock.pull_ff, clock.settle, clock.fork

    def pulled_over(
        v: str, x: str, base: str, message: str, merger: Who, seen: str, read: bool = False
    ) -> str:
        """Her docs branch ``alice/<x>`` (forked at ``base``) merged into main by ``merger``
        (a pass reads it when ``read``), the agent approves ``v`` on main (unread), she goes
        on on her branch and pulls: main fast-forwarded to her merge; settled."""
        branch = f"alice/{x}"
        note(branch, f"NOTES-{x}.md", base)
        lab.git("checkout", "-q", "main")
        tick()
        lab.git("merge", "-q", "--no-ff", "-m", message, branch, who=merger)
        if read:
            run()
            seen = lab.head()
        tick()
        lab.set_status(v, "approved")
        lab.commit("agent: ready", AGENT)
        lab.git("checkout", "-q", branch)
        tick()
        (lab.repo / f"NOTES-{x}2.md").write_text("more\n")
        lab.commit("docs: more", ALICE)
        pull_ff(branch)
        return settle(v, seen)

    tick()
    for v in [*NEVER, "docs-ok", "forge-ok"]:
        lab.write(v, plan_text(v))
    lab.commit("agent adds plans", AGENT)
    run()
    f1 = lab.head()
    tick()
    (lab.repo / "README").write_text("plans, read by the controller\n")
    lab.commit("docs", OWNER)
    run()
    seen = lab.head()
    # gap-mergein
    tick()
    lab.git("checkout", "-q", "-b", "agent/a", f1)
    lab.set_status("gap-mergein", "approved")
    lab.commit("agent: ready", AGENT)
    lab.git("checkout", "-q", "main")
    tick()
    lab.git("merge", "-q", "--no-ff", "-m", "merge agent/a", "agent/a", who=AGENT)
    note("alice/a", "NOTES-a.md", f1)
    pull_ff("alice/a")
    seen = settle("gap-mergein", seen)
    # gap-octopus
    f1, seen = fork()
    tick()
    lab.set_status("gap-octopus", "approved")
    lab.commit("agent: ready", AGENT)
    note("alice/x", "NOTES-x.md", f1)
    note("alice/b", "NOTES-b.md", f1)
    pull_ff("alice/b", "alice/x")
    seen = settle("gap-octopus", seen)
    f1, seen = fork()
    # gap-descend: Alice's docs branch (forked at F1, commit D) is merged into main by the
    # agent (G, unread), the agent approves on main (U, unread); Alice goes on on her branch
    # (D2) and pulls: F = (D2, U), main fast-forwarded
    seen = pulled_over("gap-descend", "e", f1, "merge alice/e (docs)", AGENT, seen)
    # gap-forge: the same, her docs pull request merged by the forge's merge button
    f1, seen = fork()
    seen = pulled_over("gap-forge", "g", f1, "Merge pull request #9", ALICE, seen)
    # gap-seen: as gap-descend, with a pass that reads the agent's merge of her branch
    f1, seen = fork()
    seen = pulled_over("gap-seen", "h", f1, "merge alice/h (docs)", AGENT, seen, read=True)
    # docs-ok: an unread docs commit, then the pull
    f1, seen = fork()
    tick()
    lab.git("checkout", "-q", "main")
    (lab.repo / "BOB.md").write_text("bob's notes\n")
    lab.commit("docs: bob", BOB)
    note("alice/c", "NOTES-c.md", f1)
    pull_ff("alice/c")
    seen = settle("docs-ok", seen)
    # pull-read: a plan added and frozen (read), then her stale branch pulls
    f1, seen = fork()
    tick()
    lab.write("pull-read", plan_text("pull-read"))
    lab.commit("agent adds pull-read", AGENT)
    run()
    seen = lab.head()
    note("alice/d", "NOTES-d.md", f1)
    pull_ff("alice/d")
    seen = settle("pull-read", seen)
    # forge-ok: Bob's unread approval of another plan on main; Alice's review branch (forked
    # at F1) approves forge-ok, the forge's "Update branch" merges main into it and its merge
    # button merges it into main (first parent main)
    tick()
    lab.approve("docs-ok", ALICE)  # docs-ok's approval, after the pulls (see the docstring)
    tick()
    lab.approve("pull-read", ALICE)
    f1, seen = fork()
    tick()
    lab.git("checkout", "-q", "-b", "alice/forge", f1)
    lab.approve("forge-ok", ALICE)
    tick()
    lab.git(
        "merge", "-q", "--no-ff", "-m", "Merge branch 'main' into alice/forge", "main", who=ALICE
    )
    lab.git("checkout", "-q", "main")
    tick()
    lab.git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", "alice/forge", who=ALICE)
    seen = settle("forge-ok", seen)
    run()
    run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    lab.git_date = None
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r64-flipgaps", _build)


@pytest.mark.parametrize("vid", cases(NEVER, NEVER, BROKEN))  # type: ignore[arg-type]
def test_an_unread_decision_behind_a_second_parent_never_runs(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], (lab.phases, lab.codes(vid)[:1500])  # type: ignore[attr-defined]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_an_honest_pull_is_followed_and_her_approval_runs(lab: Lab, vid: str) -> None:
    assert lab.phases[vid] == "followed", lab.phases  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert runs and runs[0]["approver"] == ALICE[1], lab.report  # type: ignore[attr-defined]


def test_the_audit_agrees_with_the_controller(lab: Lab) -> None:
    report = lab.report  # type: ignore[attr-defined]
    ran = {e["plan"] for e in report.get("executions", []) if e.get("approval_valid")}
    assert ran == {f"plans/{v}" for v in NEVER + HONEST if lab.calls(v)}, report
