"""Round 23, quorum: a collected vote whose voter then writes into the plan's folder.

Config: the bench's, plus ``plans/two/**`` needs two approvals. The agent writes each plan;
the controller freezes it. Alice approves (``partial``: her vote is collected). Then:

- ``note``: Alice commits ``plans/two/note/NOTES.md`` (the hashed content is unchanged);
- ``comment``: Alice adds a YAML comment to PLAN.yml (hash unchanged);
- ``meta``: Alice adds ``metadata: {ticket: A-1}`` to PLAN.yml (not hashed);
- ``draft``: Alice commits ``plans/two/draft/PLAN.draft.yml`` (a draft of the same plan);
- ``side-note``: Alice commits ``NOTES.md`` into the folder on a side branch; the agent merges
  it ``--no-ff``;
- ``co-note``: the agent commits ``NOTES.md`` into the folder with ``Co-authored-by: Alice``.

Then Bob approves. docs/approvals.md: "Whoever commits any file into a plan's folder ... is a
writer of the plan that folder holds", and a collected vote is judged again when the next
approval is decided: one by someone the policy "now makes an author ... no longer counts".

Each kind also has a one-approval twin ``plans/solo-<kind>``: Alice makes the same write to
the frozen plan, then approves it alone.

Defence: a collected vote counts exactly when the voter's lone approval after the same write
would: for ``note``/``draft`` the twin is refused ``E_SELF_APPROVAL`` and the quorum plan is
never started (Alice's vote is gone); for ``comment``/``meta`` (no hashed content, no other
file: the twin runs, as round 20's ``comment-rej`` held for withdrawals) the quorum plan runs
once. A vote must not survive a write that would refuse the same person's approval.

- ``coauth``: a separate check of one vote per commit: Alice's approval commit carries
  ``Co-authored-by: Bob <bob@ops.example.com>``: it is one vote (``partial``), not two.

Results: all held (``note``, ``draft``, ``side-note``, ``co-note``: the twin is
refused and the vote dropped; ``comment``, ``meta``: both run once; ``coauth``: one vote).

Changed (2026-11-30, r72comment, round 71's ``b-cmt-*``): a comment or a ``metadata:`` block
committed into a plan's own PLAN.yml is writing of that plan, as any file of its folder is
(docs/approvals.md, "Who changed the content"; a comment left there could be plan text the
agent later unwraps: round 11 with the plan file as the wrapper). So ``comment`` and ``meta``
now go as ``note`` does: the twin is refused ``E_SELF_APPROVAL`` and Alice's collected vote is
dropped (the quorum plan never starts); the rule above (a vote counts exactly when the
voter's lone approval after the same write would) is unchanged.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
AFTER = ["note", "comment", "meta", "draft"]
LATER = ["side-note", "co-note"]


def _alice_writes(lab: Lab, vid: str, slug: str) -> None:
    if vid == "note":
        lab.write(slug, "Alice: looks fine to me\n", filename="NOTES.md")
    elif vid == "draft":
        lab.write(slug, plan_text(vid), filename="PLAN.draft.yml")
    elif vid == "comment":
        path = lab.repo / "plans" / slug / "PLAN.yml"
        path.write_text(path.read_text() + "# reviewed by alice\n")
    elif vid == "meta":
        path = lab.repo / "plans" / slug / "PLAN.yml"
        path.write_text(path.read_text() + "metadata: {ticket: A-1}\n")


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in [*AFTER, *LATER, "coauth"]:
        lab.write(f"two/{vid}", plan_text(vid))
    for vid in [*AFTER, *LATER]:
        lab.write(f"solo-{vid}", plan_text(f"solo-{vid}"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in [*AFTER, *LATER]:
        lab.approve(f"two/{vid}", ALICE)
    lab.set_status("two/coauth", "approved")
    lab.commit("approve coauth\n\nCo-authored-by: Bob <bob@ops.example.com>", ALICE)
    lab.run()  # partial
    time.sleep(1.05)
    for vid in AFTER:
        _alice_writes(lab, vid, f"two/{vid}")
        _alice_writes(lab, vid, f"solo-{vid}")
        lab.commit(f"alice writes into {vid}", ALICE)
    lab.git("checkout", "-q", "-b", "side")
    for slug in ["two/side-note", "solo-side-note"]:
        lab.write(slug, "Alice: fine\n", filename="NOTES.md")
    lab.commit("alice notes on a side branch", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge side", "side", who=AGENT)
    for slug in ["two/co-note", "solo-co-note"]:
        lab.write(slug, "notes\n", filename="NOTES.md")
    lab.commit("agent notes\n\nCo-authored-by: Alice <alice@example.com>", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in [*AFTER, *LATER]:
        lab.approve(f"two/{vid}", BOB)
        lab.approve(f"solo-{vid}", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-voterwrites", _build)


@pytest.mark.parametrize("vid", [*AFTER, *LATER])
def test_a_voter_who_writes_into_the_folder_loses_her_vote(lab: Lab, vid: str) -> None:
    slug = f"two/{vid}"
    solo_ran = len(lab.calls(f"solo-{vid}"))
    assert solo_ran == 0, lab.codes(f"solo-{vid}")  # comment, meta too since round 71
    if not solo_ran:
        assert lab.refusal(f"solo-{vid}") == "E_SELF_APPROVAL", lab.codes(f"solo-{vid}")
    assert len(lab.calls(vid)) == solo_ran, lab.codes(slug)
    assert lab.started(slug) == bool(solo_ran), lab.codes(slug)


def test_a_co_author_trailer_is_no_second_vote(lab: Lab) -> None:
    slug = "two/coauth"
    assert lab.calls("coauth") == [], lab.codes(slug)
    approval = lab.plan(slug).get("approval") or {}
    assert approval.get("status") == "partial", lab.codes(slug)
    assert [a["by"] for a in approval.get("approvals", [])] == [ALICE[1]], approval
