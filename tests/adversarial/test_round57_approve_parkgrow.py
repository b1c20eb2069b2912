"""Round 57, self-approval: an approver's plan PARKED outside the plans folder, then brought
back with a large addition, so that the new plan is "less than half made of" her parked bytes.

docs/approvals.md, "Who changed the content": round 56 made a MOVE between plan folders count
the share of the removed plan that the new plan keeps (``likeness.kept_share``), so "what the
new plan ADDS does not dilute her". Parked bytes still take the other direction: "A plan such
a commit makes that git pairs with nothing takes the writers of the parked bytes the commit
takes away ... whose content it is at least half made of". So the dilution round 56 fixed for
moves may still work through a park, once git's own pairing is out of the way (git's rename
score falls under 50 with enough added, or with a respelling).

Config: the bench's. Alice commits ``plans/<v>-her`` (``draft``, one ``rec`` action, her tag
and a reason). The agent then:

- ``park-grow``: ``git mv plans/<v>-her/PLAN.yml drafts/<v>.yml`` (a commit); then
  ``git mv drafts/<v>.yml plans/<v>/PLAN.yml`` and 14 ``echo`` actions of its own appended,
  ``pending_approval`` (a commit).
- ``park-quoted``: parked the same way; brought back with every key quoted (the same YAML)
  and 3 ``echo`` actions appended.
- ``park-grow-pr``: ``park-grow``'s second commit on a branch merged ``--no-ff``.
- ``move-grow`` (control): her folder moved straight to ``plans/<v>`` with the 14 actions
  (round 56's ``mv12``, fixed).
- ``park-plain`` (control): parked and moved back with one param added.

A pass; Alice approves each ``plans/<v>``; two passes; ``plangate audit --json``.

Asserted (the defence): her tag never reaches ``rec``, ``E_SELF_APPROVAL``, no valid run in
the audit.

Seen: see BROKEN.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared
from writerkit import Flow, her_drafts, mark_in_text

VIDS = ["park-grow", "park-quoted", "park-grow-pr", "move-grow", "park-plain"]
BROKEN: dict[str, object] = {}


def hers(v: str, status: str = "draft") -> str:
    return plan_text(
        f"{v}-her",
        status=status,
        name=f"alice rotates {v}",
        params='reason: "alice: rotate the signing key of the billing service"\n',
    )


def grown(v: str, n: int) -> str:
    body = hers(v, "pending_approval").replace(
        "available_tools:\n  - name: rec\n", "available_tools:\n  - name: rec\n  - name: echo\n"
    )
    for i in range(2, n + 2):
        body += (
            f'  - id: {i}\n    tool: echo\n    why: "agent step {i}: report on {v} part {i}"\n'
            f'    params:\n      message: "agent message {i} about {v}"\n'
        )
    return body


def quoted(text: str) -> str:
    return re.sub(r"^(\s*(?:- )?)([a-z_]+):", r'\1"\2":', text, flags=re.M)


def _build(root: Path) -> Lab:
    flow = Flow(Lab(root))
    lab = flow.lab
    flow.commit("alice writes her drafts", ALICE, her_drafts(VIDS, hers))
    flow.commit("agent proposes its own", AGENT, {"own": plan_text("own", name="agent's own")})
    flow.run()
    (lab.repo / "drafts").mkdir()
    for v in ["park-grow", "park-quoted", "park-grow-pr", "park-plain"]:
        lab.git("mv", f"plans/{v}-her/PLAN.yml", f"drafts/{v}.yml")
    flow.commit("agent parks the drafts", AGENT)
    for v in ["park-grow", "park-quoted", "park-plain"]:
        (lab.repo / "plans" / v).mkdir(parents=True)
        lab.git("mv", f"drafts/{v}.yml", f"plans/{v}/PLAN.yml")
    lab.git("mv", "plans/move-grow-her", "plans/move-grow")
    back = {
        "park-grow": grown("park-grow", 14),
        "park-quoted": quoted(grown("park-quoted", 3)),
        "park-plain": hers("park-plain", "pending_approval") + '      region: "eu-west-1"\n',
        "move-grow": grown("move-grow", 14),
    }
    flow.commit("agent brings the drafts back", AGENT, back)
    lab.git("checkout", "-q", "-b", "side")
    (lab.repo / "plans" / "park-grow-pr").mkdir(parents=True)
    lab.git("mv", "drafts/park-grow-pr.yml", "plans/park-grow-pr/PLAN.yml")
    flow.commit(
        "agent brings one back on a branch", AGENT, {"park-grow-pr": grown("park-grow-pr", 14)}
    )
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    flow.run()
    flow.settle()
    return flow.finish([*VIDS, "own"], mark_in_text)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-parkgrow", _build)


def _valid_runs(lab: Lab, v: str) -> list[dict]:  # type: ignore[type-arg]
    return valid_runs(lab.report, v)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_parked_plan_grown_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:800]
    assert _valid_runs(lab, vid) == [], _valid_runs(lab, vid)


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
