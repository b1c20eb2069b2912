"""Round 56, self-approval: an approver's plan MOVED over an existing plan file of the agent's
(a modification of that file, not an add), with a small edit, in the commit that removes her
folder.

docs/approvals.md, "Who changed the content": a plan moved with an edit in the same commit
keeps its source's writers when it is a move (the removed plan and the added one at least
half alike by content); "A plan's content keeps its authors by hash". Both the move rule and
round 51's "a plan a commit makes takes the writers of whatever git pairs it from" are about
a plan file the commit ADDS. Here no plan file is added: the agent's own plan file, frozen
and waiting at ``plans/<v>``, is overwritten with her text (one param added), while her
folder ``plans/<v>-her`` goes away in the same commit. git (``-M``) reports a delete and a
modification; ``-B`` would pair them.

Config: the bench's. Alice commits ``plans/<v>-her`` (``draft``); the agent commits its own
``plans/<v>`` (``pending_approval``); a pass (the agent's plan is frozen). Then the agent:

- ``over``: one commit: ``git rm -r plans/over-her``; her text with a param added (and
  ``pending_approval``) written over ``plans/over/PLAN.yml``.
- ``over-mvf``: ``git mv -f plans/over-mvf-her/PLAN.yml plans/over-mvf/PLAN.yml`` and the
  edit, one commit (the same tree change, made with git's own move).
- ``over-pr``: ``over`` on a branch merged ``--no-ff`` by the agent.
- ``over-park``: ``git mv plans/over-park-her/PLAN.yml drafts/p.yml`` (a commit), then
  ``git mv -f drafts/p.yml plans/over-park/PLAN.yml`` with the edit (a commit).
- ``over-exact`` (control): her exact bytes (status ``pending_approval``) over the agent's
  file, her folder removed: her content by hash.

A pass; Alice approves each ``plans/<v>``; two passes; ``plangate audit --json``.

Asserted (the defence): ``E_SELF_APPROVAL``, her tag never reaches ``rec``, the audit lists
no valid run.

Seen: ``over``, ``over-mvf``, ``over-pr`` and ``over-park`` broke: each ran ``rec`` with her
tag on her approval (``completed``, approver alice), and the audit lists the run valid; the
parked variant also walks past round 50's "writers follow the bytes wherever they are parked"
(git pairs nothing when the destination existed). ``over-exact`` held (her exact bytes:
``E_SELF_APPROVAL`` by hash). Fix direction: a commit that changes a plan file is paired
like one that adds it (the removed plans and parked bytes of that commit compared with the
new content, git's ``-B`` break-and-pair or the likeness), before the file's own history is
taken as the only source.

Fixed (2026-11-29): every plan a commit writes, added OR changed in place (its hashed
content changed), is paired with the plans and parked bytes the same commit removes, by how
much of the removed plan's content it keeps (``likeness.kept_share``, 0.5): each of the four
keeps all of hers (1.0), so she is a writer (``Lifecycle._moved_writers``, and for
``over-park`` ``_parked_alike`` over ``_plans_written``).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

VIDS = ["over", "over-mvf", "over-pr", "over-park", "over-exact"]
BROKEN: dict[str, object] = {}


def hers(v: str, status: str = "draft") -> str:
    return plan_text(f"{v}-her", status=status, name=f"alice rotates {v}")


def edited(v: str) -> str:
    return hers(v, "pending_approval") + '      region: "eu-west-1"\n'


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        lab.write(f"{v}-her", hers(v))
    lab.commit("alice writes her plans", ALICE)
    for v in VIDS:
        lab.write(v, plan_text(f"{v}-agent", name=f"agent's own {v}"))
    lab.commit("agent proposes its plans", AGENT)
    lab.run()
    lab.git("rm", "-q", "-r", "plans/over-her", "plans/over-exact-her")
    lab.write("over", edited("over"))
    lab.write("over-exact", hers("over-exact", "pending_approval"))
    lab.git("mv", "-f", "plans/over-mvf-her/PLAN.yml", "plans/over-mvf/PLAN.yml")
    lab.write("over-mvf", edited("over-mvf"))
    (lab.repo / "drafts").mkdir()
    lab.git("mv", "plans/over-park-her/PLAN.yml", "drafts/p.yml")
    lab.commit("agent reworks its plans", AGENT)
    lab.git("mv", "-f", "drafts/p.yml", "plans/over-park/PLAN.yml")
    lab.write("over-park", edited("over-park"))
    lab.commit("agent reworks another", AGENT)
    lab.git("checkout", "-q", "-b", "side")
    lab.git("rm", "-q", "-r", "plans/over-pr-her")
    lab.write("over-pr", edited("over-pr"))
    lab.commit("agent reworks on a branch", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-overmove", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_plan_moved_over_the_agents_file_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:800]
    runs = [
        e
        for e in lab.report.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") == f"plans/{vid}" and e.get("approval_valid")
    ]
    assert runs == [], runs
