"""Round 68, approval side: commits FORGED under the controller's name (author and committer
``plangate <plangate@localhost>``, the agent's hand) against round 67's lapse dating ("the
first controller commit after it on the branch; from git alone, the commits the audit takes
as the controller's") and round 67's ``foreign_start`` (docs/approvals.md, "Another
controller's run": a plan whose current version's last start is a controller-named commit
this controller did not make is decided by nobody).

Lab (one, local mode, fake dates): the agent commits one ``rec`` plan per id; a pass freezes
them. Then:

- ``ghost-ahead`` (honest, and the audit's agreement): Alice approves (X); the agent reverts X
  and forges a controller-named empty commit ``plangate: freeze plans/ghost`` dated ten years
  ahead; a real controller commit follows (a pass freezes a plan the agent adds); Alice
  approves again in the forge's web editor. The controller runs it (her decision after a
  controller commit after the lapse); asserted: ran once, hers, and BOTH audits call it valid
  (a fresh clone, which takes the forged commit for the controller's, must not date the
  lapse by the forged date).
- ``ghost-early`` (lapsed): the agent's revert of X, a forged controller-named commit dated
  1990 right after, and its cherry-pick of Alice's review-branch approval Y (made before the
  lapse); asserted: never ran, no valid run in either audit.
- ``fs-v2`` (honest): Alice approves; the agent forges ``plangate: start`` of the plan (its
  status ``executing``) in the same push: nothing runs (documented); then the agent edits a
  param (v2), a pass freezes it, Alice approves v2: ran once, hers, both audits valid.
- ``fs-neighbour`` (honest): approved by Alice in the push that carries the forged starts of
  ``fs-v2`` and ``fs-hide``: the forgeries stop no other plan; ran once, hers.
- ``fs-hide`` (a refusal not hidden into a run): Alice wrote a note in the plan's folder (a
  writer) and approves it; the agent forges a start of it in the same push, then, after a
  pass, sets the file back to ``approved`` by hand (undoing its forgery); asserted: never
  ran, no valid run in either audit.

Seen (round 68): all five held. The controller goes by its record (the forged commits are
anyone's: ``ghost-*`` never dated a lapse for it), and the fresh clone, which takes them for
the controller's, still dated ``ghost-ahead``'s lapse so that her web-editor re-approval is
valid there too and called ``ghost-early``'s pick nothing valid. A forged start stops only
its plan, and only until a new version is frozen (``fs-v2``).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, cases, valid_runs
from policykit import LapseClock, with_audits
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
OLD = 631152000
AHEAD = int(time.time()) + 10 * 365 * 86400
LAPSED = ["ghost-early", "fs-hide"]
HONEST = ["ghost-ahead", "fs-v2", "fs-neighbour"]
BROKEN: dict[str, object] = {}


def _forged_start(lab: Lab, c: LapseClock, slug: str) -> str:
    lab.set_status(slug, "executing")
    lab.git("add", "-A")
    return c.git("commit", "-q", "-m", f"plangate: start plans/{slug}\n\nPlan-Event: start\n",
                 who=BOT, by=BOT)  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = LapseClock(lab)
    for v in [*LAPSED, *HONEST]:
        lab.write(v, plan(v))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans")
    lab.write("fs-hide", "alice's review note\n", "NOTES.md")
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "review note", who=ALICE, by=ALICE)
    c.run()
    # ghost-early: Y on her review branch, X on main, the agent's lapse, a 1990 ghost, pick Y
    c.git("checkout", "-q", "-b", "alice/ghost-early", "main")
    y = c.set("ghost-early", "approved", msg="lgtm (review)")
    c.git("checkout", "-q", "main")
    x = {v: c.set(v, "approved", msg="approve") for v in ("ghost-early", "ghost-ahead")}
    c.git("revert", "--no-edit", x["ghost-early"])
    old = f"@{OLD} +0000"
    c.git("commit", "-q", "--allow-empty", "-m", "plangate: freeze plans/ghost", who=BOT, by=BOT,
          adate=old, cdate=old)  # fmt: skip
    c.git("cherry-pick", y)
    c.git("revert", "--no-edit", x["ghost-ahead"])
    ahead = f"@{AHEAD} +0000"
    c.git("commit", "-q", "--allow-empty", "-m", "plangate: freeze plans/ghost", who=BOT, by=BOT,
          adate=ahead, cdate=ahead)  # fmt: skip
    lab.write("zz-filler", plan("zz-filler"))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: another plan")
    # foreign starts
    for v in ("fs-v2", "fs-neighbour", "fs-hide"):
        c.set(v, "approved", msg="approve")
    _forged_start(lab, c, "fs-v2")
    _forged_start(lab, c, "fs-hide")
    c.run()  # P1: the filler's freeze; fs-neighbour runs; fs-v2/fs-hide wait
    c.set("ghost-ahead", "approved", msg="Update PLAN.yml", by=FORGE)
    path = lab.repo / "plans" / "fs-v2" / "PLAN.yml"
    path.write_text(path.read_text().replace('{tag: "fs-v2"}', '{tag: "fs-v2", n: "2"}')
                    .replace("status: executing", "status: pending_approval"))  # fmt: skip
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: v2")
    lab.set_status("fs-hide", "approved")
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: undo the forged start")
    c.run()  # P2: ghost-ahead runs; fs-v2 v2 frozen
    c.set("fs-v2", "approved", msg="approve v2")
    c.run()  # P3
    c.run()
    return with_audits(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r68-forgedctl", _build)


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_a_forged_controller_commit_makes_nothing_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert valid_runs(lab.fresh, vid) == [], valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_decision_runs_once_and_both_audits_say_so(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    for report in (lab.report, lab.fresh):  # type: ignore[attr-defined]
        runs = valid_runs(report, vid)
        assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs
