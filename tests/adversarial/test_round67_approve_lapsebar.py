"""Round 67, approval side: forged lapses that bar an approver's honest re-approval (round
66's lapse dating, docs/approvals.md "Replayed approvals": the lapse dated the EARLIER of its
author and committer dates, never past the reader's clock nor the next controller commit; a
decision of hers dated after the lapse and not a carrier's date is a new one, whoever
commits it). The agent writes both dates of its revert ahead, so "the earlier" is ahead too
and only the reader's clock (or a controller commit after it) bounds it.

Lab (one, local mode, fake dates on a clock two hours back, no sleep): the agent commits one
``rec`` plan per id; a pass freezes them. Alice approves each (X, on main, herself). Then:

Honest, Alice approves again after the agent's lapse (asserted: ran once, valid in the
git-alone and fresh-clone audits, credited to Alice):

- ``ahead-web``: the agent reverts X with author AND committer dates ten years ahead; Alice
  approves again in the forge's web editor (author Alice, committer ``GitHub``, dated now).
- ``ahead-rb``: the same lapse; her new approval on her review branch, rebase-merged by the
  forge (her author date kept, committer ``GitHub``).
- ``hour-web``: the agent's revert dated one hour ahead (both dates); her web approval.
- ``ahead-merge``: the lapse (both dates ahead) on the agent's branch, merged ``--no-ff`` by
  the agent (merge dated now); her web approval.
- ``ahead-seen``: the same lapse as ``ahead-web``, then a pass in which the controller
  commits (it freezes a new plan of the agent's) before her web approval (the control: a
  controller commit after the lapse bounds it).
- ``split-cd``: the agent's revert with its author date in 1990 and its committer date ten
  years ahead (the lapse is the earlier: 1990); her web approval.
- ``split-ad``: author date ten years ahead, committer date 1990; her web approval.

- ``tz-web``: the agent's revert dated now at ``+1400``; her web approval a minute later at
  ``-1200`` (its wall clock a day behind the lapse's).

Lapsed (asserted: never ran, no valid run): ``ahead-pick``: the same ahead lapse; the agent
cherry-picks X (the carrier's date is the mark).

Seen (FINDINGS.md, round 67): all held. Every honest re-approval ran once, credited to
Alice, valid in both audits: a lapse dated ahead (ten years, an hour, both dates) is bounded
by the reader's clock and the next controller commit, so her web-editor approval, her
forge-rebased approval and her approval after the agent's merged ahead lapse all count as
new; split dates (the earlier one wins) and zones (``tz-web``) too. ``ahead-pick``: the
agent's copy of X after the ahead lapse is ``E_APPROVAL_REPLAYED`` (the carrier's date).

Round 67's lapse fix (2026-11-30: another hand's lapse is dated by the first controller
commit after it, the reader's clock until then) leaves this module unchanged: every honest
re-approval here follows a controller commit (the filler's freeze after the lapses), so each
is a "controller commit in between" variant and runs; ``ahead-seen`` is no different from
the others in that respect. Her re-approval with no controller commit after the agent's
lapse is refused once and then runs: round 66's re-scoped ``agent-web``/``future-web``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, valid_runs
from policykit import LapseClock, with_audits
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
OLD = 631152000  # 1990-01-01
HONEST = [
    "ahead-web",
    "ahead-rb",
    "hour-web",
    "ahead-merge",
    "ahead-seen",
    "split-cd",
    "split-ad",
    "tz-web",
]
LAPSED = ["ahead-pick"]
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = LapseClock(lab)
    for v in [*HONEST, *LAPSED]:
        lab.write(v, plan(v))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans")
    c.run()
    ahead = f"@{int(time.time()) + 10 * 365 * 86400} +0000"
    hour = f"@{int(time.time()) + 3600} +0000"
    old = f"@{OLD} +0000"
    x = {v: c.set(v, "approved", msg="approve") for v in [*HONEST, *LAPSED]}
    for v in ("ahead-web", "ahead-rb", "ahead-pick", "ahead-seen"):
        c.git("revert", "--no-edit", x[v], adate=ahead, cdate=ahead)
    c.git("revert", "--no-edit", x["hour-web"], adate=hour, cdate=hour)
    c.git("revert", "--no-edit", x["split-cd"], adate=old, cdate=ahead)
    c.git("revert", "--no-edit", x["split-ad"], adate=ahead, cdate=old)
    c.t += 20
    c.git("revert", "--no-edit", x["tz-web"], adate=f"@{c.t} +1400", cdate=f"@{c.t} +1400")
    c.git("checkout", "-q", "-b", "agent/am", "main")
    c.git("revert", "--no-edit", x["ahead-merge"], adate=ahead, cdate=ahead)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/am", "agent/am")
    c.git("cherry-pick", x["ahead-pick"])
    # ahead-seen: a pass that commits (the controller freezes a new plan) before her approval
    lab.write("filler", plan("filler"))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: filler")
    c.run()
    for v in ("ahead-web", "hour-web", "ahead-merge", "ahead-seen", "split-cd", "split-ad"):
        c.set(v, "approved", msg="Update PLAN.yml", by=FORGE)
    zone = f"@{c.t + 60} -1200"
    c.set("tz-web", "approved", msg="Update PLAN.yml", by=FORGE, adate=zone, cdate=zone)
    c.git("checkout", "-q", "-b", "alice/rb", "main")
    mine = c.set("ahead-rb", "approved", msg="approve again")
    c.git("checkout", "-q", "main")
    c.git("cherry-pick", mine, who=ALICE, by=FORGE)
    c.run()
    c.run()
    return with_audits(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r67-lapsebar", _build)


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_new_approval_after_the_agents_lapse_runs(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_the_agents_copy_of_the_lapsed_approval_does_not_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", [*HONEST, *LAPSED])
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
