"""Round 21, quorum: a collected vote that outlives an edit of the plan made and taken back
inside a merged pull request, and ``plangate check``'s prediction of it.

docs/approvals.md (Quorum, Voiding): "Any change to the hashed content voids them: the plan
is frozen again and collection starts from zero"; the date rule: an approval dated before
the trusted birth of the version (the controller's last commit before the commit that wrote
that content) is ``E_APPROVAL_REPLAYED``. Round 16 (``test_round16_approve_revote.py``,
``aba``) held this when the controller froze the in-between version on the branch.

Config: the bench's, plus ``plans/two/**`` needs two approvals. The agent writes every plan;
the controller freezes it; Alice approves (``partial``, her vote collected); a second passes.
Then the agent changes the task (version B) and restores the file byte for byte (version A
again) in a second commit, with no controller pass in between:

- ``aba-main``: both commits on main; Bob approves on main (control of the known rule).
- ``aba-ff``: both commits on a branch, fast-forwarded onto main; Bob approves on main.
- ``aba-pr``: both commits on a branch ``pr-aba-pr`` that also sets ``approved``; Bob merges
  it ``--no-ff`` (the merge is the approval request).
- ``aba-pr-later``: the same branch without ``approved``; the agent merges it ``--no-ff``;
  Bob approves on main.
- ``aba-pr-bob``: Bob makes the edit and the restore on the branch (he produced version A's
  bytes again: round 20's ``co-rej`` rule makes him a writer); the agent sets ``approved``;
  Bob merges.
- ``aba-pr-alice``: the same with Alice (whose vote is collected) making the edit and the
  restore; Bob merges.
- ``aba-pr-revert``: as ``aba-pr``, the restore made by ``git revert`` of the edit.
- ``aba-pr-coauthor``: as ``aba-pr``, the agent's restore commit carries
  ``Co-authored-by: Bob <bob@ops.example.com>`` (Bob co-produced version A's bytes); Bob
  merges. Defence: ``E_SELF_APPROVAL`` for Bob.
- ``lapse-self``: in one push (no pass between) Bob approves, then sets ``pending_approval``
  again (he takes his approval back); Carol approves. ``lapse-draft``: Bob sets ``draft``,
  the agent ``pending_approval``, Carol approves. Defence: ``partial`` with Carol only.

Defence: the vote cast before the edit is void once the plan changed (one vote: ``partial``,
or ``E_SELF_APPROVAL`` for Bob in ``aba-pr-bob``; Alice's vote is a self-approval in
``aba-pr-alice``); ``rec`` never runs. ``check-*``: for the
pull-request variants that set ``approved``, ``plangate check --as bob@ops.example.com``
predicts ``start`` exactly when the controller then started the plan.

Results: ``aba-main``, ``aba-ff``, ``aba-pr-bob``, ``aba-pr-alice`` and ``aba-pr-coauthor``
held (``partial`` with the new vote only; in ``aba-pr-bob``/``-coauthor`` Bob's merge is
``E_SELF_APPROVAL``, in ``aba-pr-alice`` her old vote no longer counts). ``aba-pr``,
``aba-pr-revert`` and ``aba-pr-later`` BROKE (strict xfails): the plan started with Alice's
pre-edit vote counted (``approval.approvals``: Alice, Bob; ``rec`` ran once), while the same
two commits fast-forwarded (``aba-ff``) or made on main (``aba-main``) void it. ``check-*``
agreed with the controller (``check-aba-pr`` and ``check-aba-pr-revert`` predicted ``start``
counting Alice), and so does a fresh clone's ``plangate audit`` (``audit-*``, strict xfails:
both starts ``approval_valid: true``, no finding): one root, seen by all three. ``lapse-self``
/ ``lapse-draft`` held: Bob's approval taken back in the same push is no vote (``partial`` with
Carol only).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = [
    "aba-main",
    "aba-ff",
    "aba-pr",
    "aba-pr-later",
    "aba-pr-bob",
    "aba-pr-alice",
    "aba-pr-revert",
    "aba-pr-coauthor",
]
LAPSES = ["lapse-self", "lapse-draft"]
CHECKED = ["aba-pr", "aba-pr-bob", "aba-pr-alice", "aba-pr-revert", "aba-pr-coauthor"]


def _mark(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 21: {what}")


#: round 21: all three broke. Fixed since: a merge that brings the plan's file voids the
#: collected votes when a commit of the merged branch changed the hashed content
#: (``aba-pr``, ``aba-pr-revert``). Accepted: ``aba-pr-later``, where the merge brings no
#: change of the plan's file at all: the history walk reads first-parent changes, so it
#: never looks inside that merge; the version that runs is the one voted for
#: (docs/threat-model.md, Accepted limits)
FOUND = {
    "aba-pr-later": _mark(
        "a collected vote survives an edit and its restore on a branch merged --no-ff "
        "(the same commits fast-forwarded void it); a later approval starts the plan"
    ),
    "aba-pr-revert": _mark(
        "a collected vote survives an edit and its git revert on a merged branch when the "
        "merge approves"
    ),
    "aba-pr": _mark(
        "a collected vote survives an edit and its restore on a merged branch when the merge "
        "approves (the same commits fast-forwarded, or merged without approving, void it)"
    ),
}
BROKEN = {
    "aba-pr-later": _mark(
        "accepted: a vote survives an edit and its undo on a branch whose merge brings no "
        "change of the plan's file (the walk reads first-parent changes)"
    )
}


def _edit_restore(lab: Lab, slug: str, who: tuple[str, str] = AGENT, how: str = "") -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    old = path.read_text()
    path.write_text(old.replace("attack variant", "attack VARIANT"))
    lab.commit(f"edit {slug}", who)
    if how == "revert":
        lab.git("revert", "--no-edit", "HEAD", who=who)
        return
    path.write_text(old)
    trailer = "\n\nCo-authored-by: Bob <bob@ops.example.com>" if how == "coauthor" else ""
    lab.commit(f"restore {slug}{trailer}", who)


def _check(lab: Lab, branch: str) -> dict[str, Any]:
    result = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", branch,
        "--as", BOB[1], "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return dict(json.loads(result.stdout))


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        approval="""\
        rules:
          - match: {paths: ["plans/two/**"]}
            require: [{count: 2}]
        """,
    )
    for vid in [*VIDS, *LAPSES]:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in VIDS:
        lab.approve(f"two/{vid}", ALICE)
    # lapses, in the same push: Bob approves and takes it back, then Carol approves
    lab.approve("two/lapse-self", BOB)
    lab.set_status("two/lapse-self", "pending_approval")
    lab.commit("bob takes his approval back", BOB)
    lab.approve("two/lapse-draft", BOB)
    lab.set_status("two/lapse-draft", "draft")
    lab.commit("bob takes his approval back", BOB)
    lab.set_status("two/lapse-draft", "pending_approval")
    lab.commit("agent submits again", AGENT)
    for vid in LAPSES:
        lab.approve(f"two/{vid}", CAROL)
    time.sleep(1.05)
    lab.run()  # partial: Alice's vote
    time.sleep(1.05)
    checks: dict[str, Any] = {}
    # aba-pr: the branch edits, restores and approves; Bob merges
    for vid, who, how in (
        ("aba-pr", AGENT, ""),
        ("aba-pr-bob", BOB, ""),
        ("aba-pr-alice", ALICE, ""),
        ("aba-pr-revert", AGENT, "revert"),
        ("aba-pr-coauthor", AGENT, "coauthor"),
    ):
        lab.git("checkout", "-q", "-b", f"pr-{vid}")
        _edit_restore(lab, f"two/{vid}", who, how)
        lab.set_status(f"two/{vid}", "approved")
        lab.commit(f"approve {vid}", AGENT)
        lab.git("checkout", "-q", "main")
        checks[vid] = _check(lab, f"pr-{vid}")
        lab.git("merge", "--no-ff", "-q", "-m", f"merge {vid}", f"pr-{vid}", who=BOB)
    # aba-pr-later: merged by the agent without approving
    lab.git("checkout", "-q", "-b", "pr-later")
    _edit_restore(lab, "two/aba-pr-later")
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge later", "pr-later", who=AGENT)
    # aba-ff: fast-forwarded
    lab.git("checkout", "-q", "-b", "pr-ff")
    _edit_restore(lab, "two/aba-ff")
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--ff-only", "-q", "pr-ff")
    # aba-main
    _edit_restore(lab, "two/aba-main")
    for vid in ("aba-main", "aba-ff", "aba-pr-later"):
        lab.approve(f"two/{vid}", BOB)
    lab.run()
    (lab.root / "checks.json").write_text(json.dumps(checks))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r21-votelife", _build)


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_vote_before_the_edit_is_void(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"two/{vid}")
    assert not lab.started(f"two/{vid}"), lab.codes(f"two/{vid}")


@pytest.mark.parametrize("vid", CHECKED, ids=[f"check-{v}" for v in CHECKED])
def test_check_predicts_what_the_controller_did(lab: Lab, vid: str) -> None:
    checks = json.loads((lab.root / "checks.json").read_text())
    rows = [p for p in checks[vid]["plans"] if p.get("plan") == f"plans/two/{vid}"]
    assert rows, checks[vid]
    assert (rows[0].get("outcome") == "start") == lab.started(f"two/{vid}"), (
        rows[0],
        lab.codes(f"two/{vid}"),
    )


@pytest.mark.parametrize("vid", LAPSES)
def test_a_vote_taken_back_before_the_pass_does_not_count(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"two/{vid}")
    approval = lab.plan(f"two/{vid}").get("approval") or {}
    assert approval.get("status") == "partial", lab.codes(f"two/{vid}")
    assert [a["by"] for a in approval.get("approvals", [])] == [CAROL[1]], approval


AUDITED = ["aba-pr", "aba-pr-later"]


@pytest.fixture(scope="module")
def audit(lab: Lab) -> dict[str, Any]:
    clone = lab.root / "audit-clone"
    if not clone.exists():
        lab.git("clone", "-q", str(lab.repo), str(clone))
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return dict(json.loads(result.stdout))


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=f"audit-{v}", marks=BROKEN.get(v, [])) for v in AUDITED],
)
def test_the_fresh_clone_audit_calls_no_such_start_valid(audit: dict[str, Any], vid: str) -> None:
    rows = [r for r in audit["executions"] if r["plan"] == f"plans/two/{vid}"]
    assert not any(r.get("approval_valid") for r in rows), rows
