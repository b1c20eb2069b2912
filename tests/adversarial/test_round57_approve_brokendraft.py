"""Round 57, honest approvals wrongly refused (?): an approver's abandoned draft that never
parsed, removed in the commit that adds the agent's own plan.

docs/approvals.md, "Who changed the content": moves are paired by content
(``likeness.kept_share``), but "A text that reads as no plan is compared by its lines": the
line rule round 55 dropped for plans (``- id: N`` and ``tool: rec`` match any runbook for
one tool; round 55's ``swapdelete`` was refused that way). A half-written draft is exactly
such a text, and nearly all of its lines are the generic ones.

Config: the bench's. Alice commits ``plans/<v>-old/PLAN.yml`` (``draft``): a plan header,
``rec``, then ``- id: N`` / ``tool: rec`` for N actions and an unfinished last line
(``params: {``): no YAML. Then the agent:

- ``broken``: ONE commit removes her folder and adds its own 3-action ``rec`` plan
  ``plans/<v>`` (own name, task, whys, tags); her draft 3 actions long.
- ``broken-long``: the same with her draft 8 actions long and the agent's plan 8 actions long
  (every line of hers but the last is one of the agent's lines).
- ``broken-park``: her broken draft moved (``git mv``) to ``drafts/<v>.yml`` (a commit), then
  removed in the commit that adds the agent's plan.
- ``broken-later`` (control): the removal and the agent's plan in two commits.

Alice approves each agent plan; two passes; ``plangate audit --json``.

Asserted (the promise): she wrote nothing of the agent's plan: her approval runs it (every
action once) and the audit finds the run valid.

Seen: every variant held (she is no writer; the agent's plan ran, audit valid). Also seen by
hand, not a break by the SPEC's lifecycle: a finished (``completed``) plan's folder cleared
and a brand-new plan written at the same path in ONE commit stays ``completed`` (the new
content never frozen; Alice's approval ``E_ILLEGAL_TRANSITION``, "from completed"): in two
commits it is a new plan (round 55's ``note``), so recurring plans must be replaced in two.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases
from test_round2_execution_kit import shared
from writerkit import Flow

VIDS = ["broken", "broken-long", "broken-park", "broken-later"]
SIZE = {"broken-long": 8}
BROKEN: dict[str, object] = {}


def agents_new(v: str) -> str:
    n = SIZE.get(v, 3)
    body = (
        f'plan:\n  name: "weekly cleanup {v}"\n  task: "prune caches for week 48 ({v})"\n'
        "  status: pending_approval\navailable_tools:\n  - name: rec\nactions:\n"
    )
    for i in range(1, n + 1):
        body += (
            f'  - id: {i}\n    tool: rec\n    why: "agent: prune cache shard {i} of {v}"\n'
            f'    params:\n      tag: "{v}-new"\n      shard: {i}\n'
        )
    return body


def her_broken(v: str) -> str:
    n = SIZE.get(v, 3)
    body = "plan:\n  status: draft\navailable_tools:\n  - name: rec\nactions:\n"
    body += "".join(f"  - id: {i}\n    tool: rec\n" for i in range(1, n + 1))
    return body + "    params: {\n"


def _build(root: Path) -> Lab:
    flow = Flow(Lab(root))
    lab = flow.lab
    flow.commit("alice starts drafts", ALICE, {f"{v}-old": her_broken(v) for v in VIDS})
    flow.run()
    (lab.repo / "drafts").mkdir()
    lab.git("mv", "plans/broken-park-old/PLAN.yml", "drafts/broken-park.yml")
    flow.commit("agent parks a draft", AGENT)
    lab.git("rm", "-q", "-r", "plans/broken-old", "plans/broken-long-old", "drafts/broken-park.yml")
    news = {v: agents_new(v) for v in ["broken", "broken-long", "broken-park"]}
    flow.commit("agent: this week's plans (drops abandoned drafts)", AGENT, news)
    lab.git("rm", "-q", "-r", "plans/broken-later-old")
    flow.commit("agent drops a draft", AGENT)
    flow.commit("agent: another plan", AGENT, {"broken-later": agents_new("broken-later")})
    flow.run()
    flow.settle()
    return flow.finish(VIDS)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-brokendraft", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_agents_plan_runs_on_her_approval(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-new")) == SIZE.get(vid, 3), lab.codes(vid)[:800]
    runs = [
        e
        for e in lab.report.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") == f"plans/{vid}"
        and e.get("approval_valid")
        and e.get("approver") == "alice@example.com"
    ]
    assert runs, lab.report  # type: ignore[attr-defined]
