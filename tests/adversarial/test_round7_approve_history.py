# ruff: noqa: E501  (attack steps read best on one line)
"""Round 7, who may make a plan run: history shapes that keep every commit reachable, or
erase only human commits.

Config: approvers Alice and ``*@ops.example.com``; ``plans/two/**`` needs two approvals.

Attacks:

- ``reset-reject``: Bob (an approver) rejects the plan; the controller's pass sees it. The
  agent then ``git reset --hard``s the branch to before Bob's rejection (erasing only a human
  commit, if the controller committed nothing for it) and Alice approves. A rejection is
  final: the plan must never run.
- ``ours-copy``: Alice commits the plan's text on her branch ``alice-ours``; the agent merges
  that branch into main with ``-s ours`` (her commit is now in main's history, reachable from
  the tip) and then copies her file onto main as its own commit
  (``git checkout alice-ours -- plans/ours-copy/PLAN.yml``). Alice approves alone. Unlike
  round 6's ``side-draft`` (an unmerged branch, accepted), her text is in the watched
  branch's history.
- ``add-delete``: Alice's branch adds the plan's text and deletes it again; the agent merges
  the branch normally (the merge brings no change), then re-creates her exact file as its
  own commit; Alice approves alone.
- ``two/revert-partial``: Alice approves a two-approval plan (the controller commits
  ``partial`` and sets it back to ``pending_approval``); the agent reverts the
  controller's ``partial`` commit (its part for this plan: the commit may be batched), so the file says ``approved`` again. Nobody else
  approves: Alice's one vote must not run it.
- ``two/reset-reject``: as ``reset-reject`` for a two-approval plan: Alice's vote is
  recorded (``partial``) before Bob's rejection; after the reset Carol approves.
- ``amend-reject``: Bob's rejection, once the controller saw it, amended by the agent into
  its own commit that leaves the plan ``pending_approval``; Alice approves.
- ``rebase-drop-reject``: Bob's rejection, once seen, dropped by ``git rebase --onto`` under
  a later commit of the agent's; Alice approves.
- ``ours-reject``: Bob rejects, the controller sees it; no rewrite: a branch from before the
  rejection merges main with ``-s ours`` and main fast-forwards to it; Alice approves.
- ``reject-reopen``: Bob rejects, then sets ``pending_approval`` again himself; Alice
  approves.
- ``two/revert-partial-bob``: the same, then Bob approves: two distinct people, a control
  for the counting (must run once).

- ``two/mv``: Alice votes (``partial``); the agent moves the plan out of ``plans/two``
  (to a path where one approval is enough) and nobody approves it there.
- ``two/twin-a``, ``two/twin-b``: twins (one hash) under ``plans/two``; Alice votes on a,
  Bob on b: a vote for one plan must not complete its twin's quorum.

Controls: ``plain`` (Alice approves the agent's plan) runs once.

Results: ``reset-reject``, ``two/reset-reject``, ``amend-reject``, ``rebase-drop-reject`` broke (strict xfails): the controller
commits nothing when it sees a plan rejected, so a reset erasing only Bob's rejection erases
no commit of the controller's, nothing is held, and Alice's (or Carol's) later approval runs
a plan the controller had seen rejected (final by docs/approvals.md). The others held.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, clone_audit, plan_text
from test_round2_approval_authors import shared_lab

APPROVAL = """\
rules:
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
"""

ATTACKS = [
    "reset-reject",
    "two/reset-reject",
    "amend-reject",
    "rebase-drop-reject",
    "ours-reject",
    "reject-reopen",
    "ours-copy",
    "add-delete",
    "two/revert-partial",
]
_ERASED = (
    "round 7: a rejection the controller saw (`rejected` is final) erased by a branch"
    " rewrite (reset, amend, rebase): the controller committed nothing for it, so no commit of its went and nothing"
    " is held (no E_HISTORY_REWRITTEN); a later approval runs the rejected plan"
)
ERASED = ["reset-reject", "two/reset-reject", "amend-reject", "rebase-drop-reject"]
BROKEN: dict[str, object] = {}  # fixed: an erased withdrawal holds its plan


def _slug(vid: str) -> str:
    return vid


def _tag(vid: str) -> str:
    return vid.replace("/", "-")


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    # Alice's text on side branches, merged into main in ways that bring no change
    lab.git("checkout", "-q", "-b", "alice-ours")
    lab.write("ours-copy", plan_text(_tag("ours-copy")))
    lab.commit("alice drafts ours-copy", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("checkout", "-q", "-b", "alice-ad")
    lab.write("add-delete", plan_text(_tag("add-delete")))
    alice_ad = lab.commit("alice drafts add-delete", ALICE)
    lab.git("rm", "-q", "-r", "plans/add-delete")
    lab.commit("alice drops add-delete", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "-s", "ours", "--no-edit", "alice-ours", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "--no-edit", "alice-ad", who=AGENT)
    lab.git("checkout", "alice-ours", "--", "plans/ours-copy/PLAN.yml")
    lab.git("checkout", alice_ad, "--", "plans/add-delete/PLAN.yml")
    for vid in [
        "reset-reject",
        "two/reset-reject",
        "ours-reject",
        "reject-reopen",
        "amend-reject",
        "rebase-drop-reject",
        "two/revert-partial",
        "two/revert-partial-bob",
        "plain",
        "two/mv",
    ]:
        lab.write(_slug(vid), plan_text(_tag(vid)))
    for twin in ["two/twin-a", "two/twin-b"]:
        lab.write(twin, plan_text("two-twin", name="twin"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze everything

    # two/reset-reject: Alice's vote is recorded (partial) before Bob's rejection
    lab.approve("two/reset-reject", ALICE)
    lab.run()
    seen: dict[str, object] = {}
    # reset-reject, two/reset-reject: Bob rejects, the controller sees it, the agent resets
    # the branch to before the rejection (erasing it, and only it)
    before = lab.head()
    for vid in ["reset-reject", "two/reset-reject"]:
        lab.set_status(vid, "rejected")
    lab.commit("bob rejects", BOB)
    lab.run()
    seen.update({v: lab.plan(v)["plan"]["status"] for v in ["reset-reject", "two/reset-reject"]})
    lab.git("reset", "-q", "--hard", before)
    lab.run()
    # amend-reject: Bob's rejection is the tip; the agent amends it into its own commit
    lab.set_status("amend-reject", "rejected")
    lab.commit("bob rejects amend-reject", BOB)
    lab.run()
    seen["amend-reject"] = lab.plan("amend-reject")["plan"]["status"]
    lab.set_status("amend-reject", "pending_approval")
    (lab.repo / "TODO").write_text("agent todo\n")
    lab.git("add", "-A")
    lab.git("commit", "-q", "--amend", "--reset-author", "-m", "agent: tidy", who=AGENT)
    lab.run()
    # rebase-drop-reject: Bob rejects, the agent commits on top, then rebases Bob's commit away
    lab.set_status("rebase-drop-reject", "rejected")
    bob = lab.commit("bob rejects rebase-drop-reject", BOB)
    lab.run()
    seen["rebase-drop-reject"] = lab.plan("rebase-drop-reject")["plan"]["status"]
    (lab.repo / "NOTES").write_text("agent notes\n")
    lab.commit("agent notes", AGENT)
    lab.git("rebase", "-q", "--onto", f"{bob}~1", bob, "main", who=AGENT)
    lab.run()
    # ours-reject, reject-reopen: Bob rejects, the controller sees it
    before = lab.head()
    for vid in ["ours-reject", "reject-reopen"]:
        lab.set_status(vid, "rejected")
    lab.commit("bob rejects", BOB)
    lab.run()
    seen.update({v: lab.plan(v)["plan"]["status"] for v in ["ours-reject", "reject-reopen"]})
    # reject-reopen: Bob reopens his own rejection (rejected -> pending_approval)
    lab.set_status("reject-reopen", "pending_approval")
    lab.commit("bob reopens", BOB)
    lab.run()
    # ours-reject: no rewrite: a branch from before the rejection merges main with -s ours,
    # main fast-forwards to it (the controller's last tip stays an ancestor)
    lab.git("checkout", "-q", "-b", "undo", before)
    lab.git("merge", "-q", "-s", "ours", "--no-edit", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "undo")
    (lab.root / "reject_seen.json").write_text(json.dumps(seen))  # shared across workers

    # approvals
    for vid in [
        "reset-reject",
        "amend-reject",
        "rebase-drop-reject",
        "ours-reject",
        "reject-reopen",
        "ours-copy",
        "add-delete",
        "two/revert-partial",
        "two/revert-partial-bob",
        "plain",
        "two/mv",
        "two/twin-a",
    ]:
        lab.approve(_slug(vid), ALICE, message=f"approve {vid}")
    lab.run()  # two/*: partial
    for vid in ["two/revert-partial", "two/revert-partial-bob"]:
        partial = lab.git(
            "log", "-1", "--format=%H", "--author=plangate@localhost", "--", f"plans/{vid}"
        ).strip()
        # the revert of the controller's part of that (possibly batched) commit
        lab.git("checkout", f"{partial}~1", "--", f"plans/{vid}/PLAN.yml")
        lab.commit(f"Revert the partial of {vid}", AGENT)
    lab.run()
    lab.git("mv", "plans/two/mv", "plans/moved-mv")
    lab.commit("agent moves two/mv out of plans/two", AGENT)
    lab.run()
    lab.approve("two/twin-b", BOB)
    lab.approve("two/revert-partial-bob", BOB)
    lab.approve("two/reset-reject", CAROL)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r7-history", _build)


@pytest.mark.parametrize("vid", ["plain", "two/revert-partial-bob"])
def test_the_controls_run_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(_tag(vid))) == 1, lab.codes(_slug(vid))


def test_the_rejections_were_seen(lab: Lab) -> None:
    seen = json.loads((lab.root / "reject_seen.json").read_text())
    assert set(seen.values()) == {"rejected"}, seen


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in ATTACKS])
def test_only_enough_people_who_did_not_write_it_make_it_run(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], lab.codes(_slug(vid))
    assert not lab.started(_slug(vid)), lab.codes(_slug(vid))


def test_a_vote_stays_with_its_plan(lab: Lab) -> None:
    """``two/mv``: Alice's one vote (``partial``), then the agent moves the plan out of
    ``plans/two`` (where one approval would do): no approval request at the new path, so it
    never runs. ``two/twin-a``/``two/twin-b``: twins (one hash) under ``plans/two``; Alice
    votes on a, Bob on b: one vote each, neither runs."""
    assert lab.calls("two-mv") == [], lab.codes("moved-mv")
    assert lab.calls("two-twin") == [], lab.codes("two/twin-b")
    for twin in ["two/twin-a", "two/twin-b"]:
        assert lab.plan(twin)["approval"]["status"] == "partial", lab.codes(twin)


def test_a_fresh_clone_audit_agrees_with_what_ran(lab: Lab, tmp_path: Path) -> None:
    """No start of an attack plan that git still shows is called valid by a fresh clone
    (the reset variants are left out: their rejection is gone from git, so no audit can see
    it; the controller's pass is where that defence belongs)."""
    report, valid = clone_audit(lab, tmp_path)
    assert {"plans/plain", "plans/two/revert-partial-bob"} <= valid, report
    for vid in ATTACKS:
        if vid not in ERASED:
            assert f"plans/{vid}" not in valid, report
