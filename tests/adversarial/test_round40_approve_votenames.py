"""Round 40, can one approval commit carry a second person's vote in its message?

Config: the bench's plus ``approval.rules: [{match: {}, require: [{count: 2}]}]`` (every
plan needs two distinct approvers; no signatures). The agent writes each plan; the
controller freezes them. Then, per variant, one commit (or merge) by Alice sets
``approved``:

- ``coauthor``: Alice's approval commit carries ``Co-authored-by: Bob <bob@ops.example.com>``.
- ``approved-by``: it carries the controller's own trailers ``Approved-By: bob@ops.example.com``
  and ``Plan: plans/approved-by``, ``Plan-Hash: <hash>``.
- ``signed-off``: ``Signed-off-by: Bob`` and ``Reviewed-by: Bob``.
- ``tag-msg``: Bob's annotated tag (message ``Plan-Approved: plans/tag-msg <hash>``) on a
  side commit; Alice merges the tag (``--no-ff``, git copies the tag message into the merge
  message) and sets ``approved`` in the merge.
- ``partial-copy``: before Alice, the agent commits an empty commit whose message copies a
  controller ``partial`` record naming Bob's vote (subject ``plangate: partial plans/...``,
  an ``approval:`` block in the body, ``Approved-By: bob@ops.example.com``).
- ``bob-side``: Bob's unsigned side commit carrying ``Plan-Approved: plans/bob-side <hash>``,
  merged by Alice while setting ``approved`` (an unsigned trailer inside a merged branch
  never counts).

Asserted (the defence): one person's commit is one vote: the controller commits
``partial`` (no ``start``) and ``rec`` never runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

VARIANTS = ["coauthor", "approved-by", "signed-off", "tag-msg", "partial-copy", "bob-side"]
FOUND: dict[str, pytest.MarkDecorator] = {}
BOB_ID = "Bob <bob@ops.example.com>"


def _side_merge(lab: Lab, vid: str, tag: bool, digest: str) -> None:
    lab.git("checkout", "-q", "-b", f"side-{vid}")
    msg = f"review {vid}\n\nPlan-Approved: plans/{vid} {digest}\n"
    lab.git("commit", "-q", "--allow-empty", "-m", msg if not tag else f"side {vid}", who=BOB)
    ref = f"side-{vid}"
    if tag:
        ref = f"t-{vid}"
        lab.git("tag", "-a", "-m", f"ok\n\nPlan-Approved: plans/{vid} {digest}", ref, who=BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-commit", ref, who=ALICE)
    lab.set_status(vid, "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "--no-edit", who=ALICE)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval="rules:\n  - match: {}\n    require: [{count: 2}]\n")
    for vid in VARIANTS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    digests = {v: lab.plan(v)["frozen"]["hash"] for v in VARIANTS}
    trailers = {
        "coauthor": f"Co-authored-by: {BOB_ID}",
        "approved-by": (
            "Plan: plans/approved-by\nPlan-Hash: {h}\nApproved-By: bob@ops.example.com"
        ).format(h=digests["approved-by"]),
        "signed-off": f"Reviewed-by: {BOB_ID}\nSigned-off-by: {BOB_ID}",
    }
    for vid, text in trailers.items():
        lab.approve(vid, ALICE, message=f"approve {vid}\n\n{text}\n")
    lab.git(
        "commit", "-q", "--allow-empty", "-m",
        "plangate: partial plans/partial-copy\n\napproval:\n  status: partial\n"
        "  approvals: [{by: bob@ops.example.com}]\n\nPlan: plans/partial-copy\n"
        f"Plan-Hash: {digests['partial-copy']}\nPlan-Status: pending_approval\n"
        "Approved-By: bob@ops.example.com\n",
        who=AGENT,
    )  # fmt: skip
    lab.approve("partial-copy", ALICE)
    _side_merge(lab, "tag-msg", True, digests["tag-msg"])
    _side_merge(lab, "bob-side", False, digests["bob-side"])
    lab.merged_msg = lab.git("log", "-1", "--format=%B", "HEAD~1")  # type: ignore[attr-defined]
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-votenames", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_the_tag_message_reached_the_merge(lab: Lab) -> None:
    assert "Plan-Approved: plans/tag-msg" in lab.merged_msg, lab.merged_msg  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_one_commit_is_one_vote(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.subjects(vid)
    assert any(s.startswith("plangate: partial ") for s in lab.subjects(vid)), lab.codes(vid)
