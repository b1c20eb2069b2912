# ruff: noqa: E501  (attack steps read best on one line)
"""Round 18, who may make a plan run: an approver's merge commit replayed by ``git rebase
--rebase-merges`` onto a branch that sets another version ``approved``.

docs/approvals.md, "Replayed approvals": git keeps a commit's author, author date and subject
through cherry-pick, am and rebase, so an approval commit brought back for another version is
``E_APPROVAL_REPLAYED`` when its author date is earlier than the version's trusted birth;
"Merges are exempt: a merge's version is its second parent's, bound by the merge itself". But
``git rebase -r`` re-creates a merge (its todo line ``merge -C <merge> <label>``) with the
original merge's author, author date and message, on whatever second parent the todo names: a
merge Alice made once becomes, written by the agent's own git, a new merge authored by Alice
whose second parent is the agent's branch setting ``status: approved``.

Config: the bench's (one approval; approvers Alice and ``*@ops.example.com``), plus
``plans/two/**`` needs two approvals.

1. The agent adds ``first``, ``other``, ``any`` and ``ctl``; the controller freezes them.
2. Alice merges (``--no-ff``) the agent's review branch that sets ``first`` approved: it runs
   (one ``rec`` call). She also merges an unrelated docs pull request (``docs/x.md``).
3. A second later the agent adds ``later`` and the controller freezes it (a commit of its
   own after Alice's merges, so the replayed merges' author dates are strictly older).
4. For each variant the agent branches from main, commits ``status: approved`` for the plan,
   and runs ``git rebase -i -r`` with the todo ``reset <branch>; label b; reset <main>;
   merge -C <Alice's merge> b``, fast-forwarding main to a merge authored by Alice:

- ``other``: Alice's merge of ``first`` replayed for plan ``other`` (never shown to Alice).
- ``any``: Alice's docs merge (it approved nothing) replayed for plan ``any``.
- ``other-c``: no rebase: the agent runs ``git merge --no-ff --no-commit`` of its branch and
  ``git commit -C <Alice's merge of first>`` (git reuses her authorship with the message).

Defence: the replayed merge is ``E_APPROVAL_REPLAYED`` (or refused otherwise) and nothing of
the plan runs. Control: ``ctl``, approved by a real merge Alice makes at the end, runs once;
``first`` ran once on Alice's real merge.

Results: all five BROKE (``other``, ``any``, ``other-c``, ``gate``: ``gate-gated`` ran on the
replayed "gate approval by alice", ``two/quorum``: started on Bob's and the replayed vote). The controller took each re-created merge as Alice's
approval request (``approval request (approve) by alice@example.com``), started the plan and
``rec`` ran; the merge's author date (before the plans' controller commits) did not matter,
as merges are exempt from the date rule. ``veto`` BROKE too: the replayed merge counted as
Alice's rejection (``alice@example.com set status rejected``), the plan is ``rejected`` and
Bob's later approval is ignored (``E_ILLEGAL_TRANSITION``). (An ``identity: committer`` controller would read the
agent as the approver.)

Changed (2026-12-05, round 117 fix117w): ``test_a_replayed_merge_withdraws_nothing`` now
asserts the replayed rejection holds (``veto`` rejected, never run): a copy of an entitled
person's withdrawal withdraws, by any hand (docs/approvals.md, "Replayed approvals").

Changed again (2026-12-06, round 120 merged-rejection-charged-to-merger, fix121c merged as
fix122c): the id asserts its name once more. The replayed merge is Alice's docs merge; it
rejected nothing. The ``rejected`` it brings was set by the agent on its own branch, and a
rejection a merged commit made is that commit's, judged by the withdrawal rule, never the
merger's (docs/approvals.md: "a rejection or an abort a commit on a merged branch made is
judged as that commit"). The agent is neither an approver nor an author of Carol's plan, so
its rejection is ignored and reported (``E_APPROVER_NOT_ALLOWED``), and Bob's genuine approval
runs ``veto`` once. Round 117's reading charged the merged rejection to whoever the merge
named; the merge's authorship here is forged (out of scope without signatures), and a forged
merge author must not make an ignored withdrawal count either.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["other", "any", "other-c", "gate", "two/quorum"]
#: the tag whose rec call shows the replay counted
TAG = {
    "other": "other",
    "any": "any",
    "other-c": "other-c",
    "gate": "gate-gated",
    "two/quorum": "quorum",
}
RULE = "rules:\n  - match: {paths: ['plans/two/**']}\n    require: [{count: 2}]\n"
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "gate-gated"
"""
_WHY = "round 18: an approver's merge re-created by git rebase -r (merge -C) onto the agent's branch approves plans she never saw: merges are exempt from the date rule"
#: round 18: all six broke. Fixed since: an approval identity (author, author date, subject)
#: names no plan, so Alice's merge approving ``first`` re-created for another plan is a
#: replay, for a withdrawal too, and a merge is held to the date rule. Accepted: ``any``,
#: her docs merge, approved nothing, so the controller never recorded its identity; a merge
#: re-created from it is a commit made under her name by the agent's git: forged authorship,
#: closed by require_signed, identity: committer or branch protection (docs/threat-model.md)
FOUND = {v: pytest.mark.xfail(strict=True, raises=AssertionError, reason=_WHY) for v in VIDS}
_ACCEPTED = (
    "accepted (round 18): a merge re-created from an approver's merge that approved nothing "
    "is forged authorship (docs/threat-model.md, Accepted limits)"
)
BROKEN = {"any": pytest.mark.xfail(strict=True, raises=AssertionError, reason=_ACCEPTED)}


def _pr_merge(lab: Lab, slug: str, branch: str) -> str:
    """The agent's review branch setting ``slug`` approved, merged by Alice (a real merge)."""
    lab.git("checkout", "-q", "-b", branch)
    lab.approve(slug, AGENT, message=f"request approval of {slug}")
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", branch, who=ALICE)
    return lab.head()


def _replay(lab: Lab, slug: str, merge: str, status: str = "approved") -> None:
    tip = lab.head()
    lab.git("checkout", "-q", "-b", f"replay-{slug}")
    lab.set_status(slug, status)
    lab.commit(f"set {slug} {status}", AGENT)
    branch = lab.head()  # (a slug with "/" makes a nested branch name: fine for git)
    lab.git("checkout", "-q", "main")
    todo = lab.root / f"todo-{slug.replace('/', '-')}"
    todo.write_text(f"reset {branch}\nlabel b\nreset {tip}\nmerge -C {merge} b\n")
    lab.extra_env = {
        "GIT_SEQUENCE_EDITOR": f"cp {todo}",
        "GIT_COMMITTER_NAME": AGENT[0],
        "GIT_COMMITTER_EMAIL": AGENT[1],
    }
    try:
        lab.git("rebase", "-q", "-i", "-r", "HEAD")
    finally:
        lab.extra_env = {}
    author = lab.git("log", "-1", "--format=%ae %P").split()
    assert author[0] == ALICE[1] and len(author) == 3, author  # a merge authored by Alice


def _commit_c(lab: Lab, slug: str, merge: str) -> None:
    lab.git("checkout", "-q", "-b", f"replay-{slug}")
    lab.approve(slug, AGENT, message=f"set {slug} approved")
    lab.git("checkout", "-q", "main")
    lab.extra_env = {"GIT_COMMITTER_NAME": AGENT[0], "GIT_COMMITTER_EMAIL": AGENT[1]}
    try:
        lab.git("merge", "-q", "--no-ff", "--no-commit", f"replay-{slug}")
        lab.git("commit", "-q", "-C", merge)
    finally:
        lab.extra_env = {}
    author = lab.git("log", "-1", "--format=%ae %P").split()
    assert author[0] == ALICE[1] and len(author) == 3, author


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULE)
    for vid in ["other", "any", "other-c", "first", "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.write("gate", plan_text("gate", extra_actions=GATE))
    lab.write("two/quorum", plan_text("quorum"))
    lab.commit("agent adds plans", AGENT)
    lab.write("veto", plan_text("veto"))
    lab.commit("carol writes veto", CAROL)
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    # Alice's merges land a second after the freeze: in the freeze's own second round 104's
    # rule refuses another hand's copy of them (the agent's re-created merge) by its date, which
    # would hide whether the accepted limit below still holds
    time.sleep(1.05 - time.time() % 1 + 0.05)
    merge_first = _pr_merge(lab, "first", "review-first")
    lab.git("checkout", "-q", "-b", "docs")
    (lab.repo / "docs").mkdir()
    (lab.repo / "docs" / "x.md").write_text("notes\n")
    lab.commit("docs: notes", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", "docs", who=ALICE)
    merge_docs = lab.head()
    lab.approve("gate", BOB)
    lab.approve("two/quorum", BOB)
    lab.run()  # first runs; gate pauses; quorum is partial
    time.sleep(1.1)  # the replay's author date is strictly older than every later commit
    lab.write("later", plan_text("later"))
    lab.commit("agent adds later", AGENT)
    lab.run()  # a controller commit after Alice's merges
    time.sleep(1.1)
    _replay(lab, "other", merge_first)
    _replay(lab, "any", merge_docs)
    _commit_c(lab, "other-c", merge_first)
    _replay(lab, "gate", merge_docs)
    _replay(lab, "two/quorum", merge_docs)
    _replay(lab, "veto", merge_docs, status="rejected")
    lab.run()
    lab.approve("veto", BOB)
    _pr_merge(lab, "ctl", "review-ctl")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r18-mergereplay", _build)


def test_controls_run_once(lab: Lab) -> None:
    assert len(lab.calls("gate")) == 1, lab.codes("gate")
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")
    assert len(lab.calls("first")) == 1, lab.codes("first")


def test_a_replayed_merge_withdraws_nothing(lab: Lab) -> None:
    """The replayed merge brings the agent's rejection of Carol's plan: the agent's, not
    Alice's, ignored and reported; Bob's approval runs the plan once."""
    row = lab.rows().get("plans/veto", {})
    assert row.get("status") == "completed", lab.codes("veto")
    assert len(lab.calls("veto")) == 1, lab.codes("veto")
    notes = " ".join(row.get("notes") or [])
    assert "E_APPROVER_NOT_ALLOWED: agent@example.com set status rejected" in notes, notes


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_replayed_merge_approves_nothing(lab: Lab, vid: str) -> None:
    assert lab.calls(TAG[vid]) == [], lab.codes(vid)
    if vid != "gate":  # the gate's plan started on Bob's real approval
        assert not lab.started(vid), lab.codes(vid)
