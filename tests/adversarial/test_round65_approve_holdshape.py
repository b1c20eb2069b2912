"""Round 65, approval side: round 64's first-parent hold (docs/approvals.md, "The
first-parent line the controller follows": a new tip whose first-parent line puts UNREAD
commits (off the new line, descending from the tip read) that change plans or the policy
record behind a second parent is held, ``E_HISTORY_REWRITTEN``; a commit of the branch's own
line counts by what it changed against its first parent) against unread decisions whose
effect on a plan comes only through a merge, renames in and out of the watched folders, and
an honest pull that hides the controller's own records behind a second parent.

Lab (one, local mode, dates on a past clock, no sleep), the shape of round 64's flipgaps:
the agent adds the plans, a pass freezes them (F1); the owner's docs commit and a pass (S,
the tip read). Before each later phase the same again (``fork``). One phase at a time (the
hold is the whole controller's), each ending with a pass; a pass that holds is answered by
putting main back at the tip read (the remedy's first half).

- ``via-merge``: the agent's branch forked at F1 (before S) sets ``via-merge`` ``approved``
  (A, which does NOT descend from S); the agent merges main INTO that branch (G = (A, S), a
  foxtrot of its own: G's change against its first parent A is the owner's docs only) and
  main is fast-forwarded to G (unread); Alice's docs branch forked at S pulls (M = (D, G)),
  main fast-forwarded to M. The new line is M, D, S: the tip read is on it; the unread
  commit off it that descends from S is G, which changed no plan against its first parent;
  the commit that changed the plan (A) does not descend from S. Alice's merge M brings the
  agent's ``approved`` against her first parent. Asserted: never runs, no valid run.
- ``via-seen``: the same, with a pass that READ G (the agent's own foxtrot onto the tip read
  is followed: its decisions are the agent's); then Alice's stale docs branch forked at S
  pulls, main fast-forwarded. Asserted: never runs, no valid run.
- ``mv-out``: the agent's unread commit on main moves ``plans/mv-out`` to ``archive/``
  (``git mv``); Alice's docs branch forked at S pulls, fast-forward. Asserted: held (the
  commit changes the plans folder).
- ``policy-mv``: the agent's unread commit moves ``.plangate/policy.json`` to
  ``docs/policy.json``; Alice's pull as above. Asserted: held.
- ``rename-in``: the agent's unread commit moves ``drafts/rename-in/PLAN.yml`` (committed and
  read earlier, outside the plans folder) to ``plans/rename-in/PLAN.yml``. Asserted: held.
- ``prefix-docs`` (honest): Bob's unread commit adds ``plans-notes/README.md`` (a folder
  whose name starts like the plans folder); Alice's stale pull. Asserted: followed.
- ``policy-sibling`` (honest): Bob's unread commit adds ``.plangate/NOTES.md`` (beside the
  policy record). Asserted: followed.
- ``lift`` (honest): the agent's ``approved`` for ``lift-agent`` on main (unread), Alice's
  stale pull: held (``lift-held``); the documented remedy, main back at the tip read and her
  docs branch merged again ``--no-ff`` by her; then Alice approves ``lift`` on main.
  Asserted: followed, ``lift`` runs once credited to her, ``lift-agent`` never runs.
- ``pull-keeps-run`` (honest): Bob approves ``ran-before`` on main and a pass runs it (start
  and outcome read); Alice's review branch, forked BEFORE that run, approves
  ``pull-keeps-run``; she pulls (her merge straight onto the tip read: allowed) and main is
  fast-forwarded, so the controller's start and outcome of ``ran-before`` sit behind the
  second parent. Asserted: followed, ``pull-keeps-run`` runs once on her approval,
  ``ran-before`` ran once, and the fresh-clone audit calls her run valid, credited to her
  (that it drops ``ran-before``'s run is round 29's ``_foxaudit`` limit, not asserted).

First tried with Alice's branches forked AT the tip read (not at F1): ``via-merge`` then
ran credited to Alice and the three moves were followed, but that is the documented limit
(docs/threat-model.md: a branch forked at the tip read and merged with its parents flipped
has the parents of an honest merge in the other order), so every branch here forks at F1.

Seen (FINDINGS.md, round 65): everything HELD. ``via-merge`` held (``E_HISTORY_REWRITTEN``,
never run); ``via-seen``: the agent's own foxtrot onto the tip read was followed (its
approval is the agent's) and Alice's later stale pull did not make it hers (never run, no
valid run); ``mv-out``, ``policy-mv``, ``rename-in`` held. Honest: ``prefix-docs`` and
``policy-sibling`` followed; ``lift`` held, then after the remedy followed and ran once,
hers; ``pull-keeps-run`` followed and ran once, hers (the fresh-clone audit drops
``ran-before``'s run behind the second parent: round 29's accepted ``_foxaudit`` limit).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text, valid_runs
from policykit import Pulls
from test_round2_execution_kit import shared

NEVER = ["via-merge", "via-seen"]
HELD = ["mv-out", "policy-mv", "rename-in"]
HONEST = ["pull-keeps-run"]
FOLLOW = ["prefix-docs", "policy-sibling", "lift"]
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    clock = Pulls(lab)
    tick, run = clock.tick, clock.run
    note, pull_ff, settle, fork = clock.note, clock.pull_ff, clock.settle, clock.fork

    tick()
    for v in [*NEVER, "mv-out", "pull-keeps-run", "ran-before", "lift", "lift-agent"]:
        lab.write(v, plan_text(v))
    draft = lab.repo / "drafts" / "rename-in" / "PLAN.yml"
    draft.parent.mkdir(parents=True)
    draft.write_text(plan_text("rename-in"))
    lab.commit("agent adds plans", AGENT)
    run()
    # via-merge
    f1, seen = fork()
    tick()
    lab.git("checkout", "-q", "-b", "agent/v", f1)
    lab.set_status("via-merge", "approved")
    lab.commit("agent: ready", AGENT)
    tick()
    lab.git("merge", "-q", "--no-ff", "-m", "merge main into agent/v", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "agent/v")
    note("alice/v", "NOTES-v.md", f1)
    pull_ff("alice/v")
    seen = settle("via-merge", seen)
    # via-seen
    f1, seen = fork()
    tick()
    lab.git("checkout", "-q", "-b", "agent/s", f1)
    lab.set_status("via-seen", "approved")
    lab.commit("agent: ready", AGENT)
    tick()
    lab.git("merge", "-q", "--no-ff", "-m", "merge main into agent/s", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "agent/s")
    seen = settle("via-seen-agent", seen)
    note("alice/s", "NOTES-s.md", f1)
    pull_ff("alice/s")
    seen = settle("via-seen", seen)
    # mv-out, policy-mv, rename-in: one unread move on main, then Alice's pull
    for vid, move in (
        ("mv-out", ("plans/mv-out", "archive/mv-out")),
        ("policy-mv", (".plangate/policy.json", "docs/policy.json")),
        ("rename-in", ("drafts/rename-in", "plans/rename-in")),
    ):
        f1, seen = fork()
        tick()
        (lab.repo / move[1]).parent.mkdir(parents=True, exist_ok=True)
        lab.git("mv", move[0], move[1])
        lab.commit(f"agent: move {move[0]}", AGENT)
        note(f"alice/{vid}", f"NOTES-{vid}.md", f1)
        pull_ff(f"alice/{vid}")
        seen = settle(vid, seen)
    # prefix-docs, policy-sibling: Bob's unread commit beside the watched folders
    for vid, path in (
        ("prefix-docs", "plans-notes/README.md"),
        ("policy-sibling", ".plangate/NOTES.md"),
    ):
        f1, seen = fork()
        tick()
        (lab.repo / path).parent.mkdir(parents=True, exist_ok=True)
        (lab.repo / path).write_text(f"{vid}\n")
        lab.commit(f"docs: {path}", BOB)
        note(f"alice/{vid}", f"NOTES-{vid}.md", f1)
        pull_ff(f"alice/{vid}")
        seen = settle(vid, seen)
    # lift: a held foxtrot (the agent's approval on main, Alice's stale pull), then the
    # documented remedy: main back at the tip read, her branch merged again by her
    f1, seen = fork()
    tick()
    lab.set_status("lift-agent", "approved")
    lab.commit("agent: ready", AGENT)
    note("alice/lift", "NOTES-lift.md", f1)
    pull_ff("alice/lift")
    settle("lift-held", seen)
    tick()
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/lift again", "alice/lift^1", who=ALICE)
    tick()
    lab.approve("lift", ALICE)
    seen = settle("lift", seen)
    run()
    # pull-keeps-run
    f1, seen = fork()
    tick()
    lab.approve("ran-before", BOB)
    run()
    run()
    seen = lab.head()
    tick()
    lab.git("checkout", "-q", "-b", "alice/k", f1)
    lab.approve("pull-keeps-run", ALICE)
    pull_ff("alice/k")
    seen = settle("pull-keeps-run", seen)
    run()
    run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    got = lab.cli("audit", "--json", cwd=clone)
    lab.clone_report = json.loads(got.stdout)  # type: ignore[attr-defined]
    lab.git_date = None
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r65-holdshape", _build)


@pytest.mark.parametrize("vid", cases(NEVER, NEVER, BROKEN))  # type: ignore[arg-type]
def test_an_unread_decision_brought_through_a_merge_never_runs(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], (lab.phases, lab.codes(vid)[:1500])  # type: ignore[attr-defined]
    assert valid_runs(lab.clone_report, vid) == [], lab.phases  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HELD, HELD, BROKEN))  # type: ignore[arg-type]
def test_an_unread_move_in_or_out_of_the_watched_folders_holds(lab: Lab, vid: str) -> None:
    assert lab.phases[vid] == "held", lab.phases  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(FOLLOW, FOLLOW, BROKEN))  # type: ignore[arg-type]
def test_honest_work_beside_the_watched_folders_is_followed(lab: Lab, vid: str) -> None:
    assert lab.phases[vid] == "followed", lab.phases  # type: ignore[attr-defined]
    if vid == "lift":
        assert lab.phases["lift-held"] == "held", lab.phases  # type: ignore[attr-defined]
        assert len(lab.calls("lift")) == 1, lab.codes("lift")[:1500]
        assert lab.calls("lift-agent") == [], lab.codes("lift-agent")[:1500]
        runs = valid_runs(lab.clone_report, "lift")  # type: ignore[attr-defined]
        assert runs and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_an_honest_pull_onto_the_tip_read_keeps_every_run(lab: Lab, vid: str) -> None:
    assert lab.phases[vid] == "followed", lab.phases  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert len(lab.calls("ran-before")) == 1, lab.codes("ran-before")[:1500]
    report = lab.clone_report  # type: ignore[attr-defined]
    runs = valid_runs(report, vid)
    assert runs and runs[0]["approver"] == ALICE[1], report
