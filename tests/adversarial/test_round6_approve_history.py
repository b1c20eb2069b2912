"""Round 6, approval side: what the controller remembers against what git still shows.

Config: ``plans/two/**`` needs two approvals; approvers Alice and ``*@ops.example.com``.

Attacks:

- ``two/erase-vote``: Alice approves (the controller commits ``partial``); the agent resets
  the branch to before Alice's approval (erasing it and the ``partial`` commit; the freeze
  stays, so nothing is held: "a partial-quorum commit that a rewrite erases holds nothing:
  the next pass decides again from what remains"); then Bob approves. What remains is one
  approval (Bob's): the index's memory of Alice's erased vote must not complete the quorum
  (git history would no longer prove it).
- ``erase-vote-restore``: the same, but the agent then re-adds (as itself) a commit whose
  tree is Alice's erased approval commit's tree (``git checkout <A> -- plans``): the status
  is set by the agent, Alice's vote is still gone.
- ``side-draft``: Alice commits the plan's text on her own branch ``alice-draft`` (a branch
  of the same repository, never merged); the agent copies the file onto main
  (``git checkout alice-draft -- plans/side-draft/PLAN.yml``) as its own commit; Alice
  approves. The index keeps "everyone who ever wrote that exact hashed content on any
  path" — of the watched branch only?
- ``revert-reject``: Bob rejects; the agent ``git revert``s Bob's rejection; Alice approves.

Results: ``side-draft`` broke (strict xfail); the others held.

Controls: ``two/honest`` (Alice and Bob) runs; ``plain`` (one approval, not written by
Alice) runs. A fresh clone's ``plangate audit`` calls each start valid.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BenchError, Lab, plan_text
from test_round2_approval_authors import shared_lab

APPROVAL = """\
rules:
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
"""

ATTACKS = ["two/erase-vote", "two/erase-vote-restore", "side-draft", "revert-reject"]
CONTROLS = ["two/honest", "plain"]
BROKEN: dict[str, object] = {
    "side-draft": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 6: plan text Alice committed under plans/ on another branch of the same"
        " repository, copied onto main by the agent, is not counted as hers: she approves"
        " her own plan alone and it runs",
    )
}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    # Alice's draft on her own branch
    lab.git("checkout", "-q", "-b", "alice-draft")
    lab.write("side-draft", plan_text("side-draft"))
    lab.commit("alice drafts a plan", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("checkout", "alice-draft", "--", "plans/side-draft/PLAN.yml")
    for vid in ["two/erase-vote", "two/erase-vote-restore", "revert-reject", *CONTROLS]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds the plans", AGENT)
    lab.run()  # freeze
    base = lab.head()
    lab.approve("two/erase-vote", ALICE)
    lab.approve("two/erase-vote-restore", ALICE)
    alice_commit = lab.head()
    lab.set_status("revert-reject", "rejected")
    reject = lab.commit("bob rejects", BOB)
    lab.run()  # partials for Alice, rejected recorded
    assert "partial" in lab.codes("two/erase-vote"), lab.codes("two/erase-vote")
    # the agent rewrites: back to the freeze, then replays everything but Alice's votes
    tip = lab.head()
    lab.git("reset", "-q", "--hard", base)
    lab.git("checkout", tip, "--", "plans/revert-reject")
    lab.commit("agent keeps the rest", AGENT)
    lab.run()
    lab.git("checkout", alice_commit, "--", "plans/two/erase-vote-restore")
    lab.commit("agent restores the file as it was", AGENT)
    lab.approve("two/honest", ALICE)
    lab.git("revert", "--no-edit", reject, who=AGENT, check=False)
    if lab.git("status", "--porcelain").strip():  # the revert did not apply: redo by hand
        lab.git("revert", "--abort", check=False)
        lab.set_status("revert-reject", "pending_approval")
        lab.commit(f'Revert "bob rejects"\n\nThis reverts commit {reject}.', AGENT)
    lab.run()
    lab.approve("two/erase-vote", BOB)
    lab.approve("two/erase-vote-restore", BOB)
    lab.approve("two/honest", BOB)
    lab.approve("side-draft", ALICE)
    lab.approve("revert-reject", ALICE)
    lab.approve("plain", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r6-history", _build)


@pytest.mark.parametrize("vid", CONTROLS)
def test_the_controls_run(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, marks=[BROKEN[v]] if v in BROKEN else []) for v in ATTACKS],  # type: ignore[list-item]
)
def test_only_approvals_git_still_shows_by_people_who_did_not_write_it_count(
    lab: Lab, vid: str
) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def test_a_fresh_clone_audit_agrees_with_what_ran(lab: Lab) -> None:
    clone = lab.root / "clone-audit"
    if not clone.exists():
        subprocess.run(
            ["git", "clone", "-q", "-b", "main", str(lab.repo), str(clone)],
            check=True,
            env=lab.env(),
        )
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    try:
        report = json.loads(result.stdout)
    except ValueError as exc:
        raise BenchError(f"audit: {result.stdout[-500:]} {result.stderr[-500:]}") from exc
    runs = report.get("executions") or report.get("runs") or []
    bad = [r for r in runs if not r.get("approval_valid")]
    assert bad == [], bad
