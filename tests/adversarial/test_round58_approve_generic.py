"""Round 58, honest approvals wrongly refused: the agent's OWN plan whose only words in common
with an approver's removed plan are a short, generic ``why`` ("restart the service").

docs/approvals.md, "Who changed the content" (round 57, ``likeness.made_share``): a new plan is
made of a removed one when at least half of ITS OWN weight is the removed plan's unchanged
leaves; an action counts when its ``why`` is unchanged, then its unchanged leaves count one by
one; layout and template strings weigh 0.1, params and reasons 1. A one-param plan of the
agent's whose ``why`` is a stock phrase the approver also used is then "hers" (why 1 + layout
0.3 over why 1 + param 1 + layout 0.3 + name/task 0.2: 0.52), though every value that says what
it does (which service, its name, its task) is the agent's. The docs' own bound says a pair
that is no move scores at most 0.09 both ways.

Config: the bench's. Alice commits ``plans/<v>-old``: ``restart api`` (2-space YAML; one
``rec`` action, ``why: "restart the service"``, her own tag). The agent then, in ONE clean-up
commit, removes her plan and adds its own ``plans/<v>`` (4-space YAML, its own name, task and
tag, so git pairs nothing):

- ``gen-rm``: her plan a pending draft, ``git rm``'d.
- ``gen-archive``: her draft moved out to ``archive/<v>-old/PLAN.yml`` (parked).
- ``gen-done``: her plan approved by Bob and run before the clean-up (last week's restart).
- ``gen-3``: her plan a 3-action runbook (stop / restart / check, stock reasons); the agent's
  plan one action ``restart the service``.
- ``gen-2p``: the agent's plan has a second param (``service: web``).
- ``gen-big``: the agent's plan has four more actions of its own after the stock one (each its
  own reason and params): the removed plan's share kept, not the new plan's.
- ``gen-own`` (control): the same commit, the agent's plan with its own ``why``.
- ``gen-sep`` (control): the agent's plan with the stock ``why`` added in a commit of its own
  (her ``gen-sep-old`` removed in an earlier commit).

A pass; Alice approves each agent plan; two passes; ``plangate audit --json``.

Asserted (the defence of honest approvals): the agent's plan runs once on Alice's approval,
no ``E_SELF_APPROVAL``, the audit lists the run valid.

Seen: ``gen-rm``, ``gen-archive``, ``gen-done``, ``gen-3``, ``gen-2p`` and ``gen-big`` broke
(wrongly refused): Alice's approval of the agent's own plan is refused ``E_SELF_APPROVAL``
("alice wrote
or changed this plan's content"), the plan never runs; ``gen-2p`` too, though the agent's plan
has two params of its own, and ``gen-big``, a five-action plan of which one action's
``why`` is the stock phrase (the share of her small removed plan "kept"). Held: ``gen-own``
(the same commit, another ``why``) and ``gen-sep``
(no removal in the commit) ran once, audit valid. Every removed plan's writers go to every plan
the commit writes made of it, so one stock reason in a clean-up commit that removes any old
plan of hers bars her. Fix direction: a ``why`` too short or common to tell plans apart should
not by itself match an action (weigh it like template text), or a match should need a
distinguishing param too.

Fixed (2026-11-29): a ``why`` is evidence by how much it says (``likeness.why_strength``:
its words over 6; "restart the service" is 0.5), and an action of hers survives on it only
with the share of what it runs kept (both ways) making up the rest. The agent's own tag, or
two params, beside her stock reason keep none of her run: the action is not hers, the new
plan 0.04 hers (0.52 by round 57's rule). Reasons of 6 words or more count whole as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import Flow, last_week

VIDS = ["gen-rm", "gen-archive", "gen-done", "gen-3", "gen-2p", "gen-big", "gen-own", "gen-sep"]
BROKEN: dict[str, object] = {}

OWN_WHY = "reload web with the new feature flags"
STOCK = [
    ("stop", "stop the service"),
    ("restart", "restart the service"),
    ("check", "check the service health"),
]


def hers(v: str) -> str:
    steps = STOCK if v == "gen-3" else [STOCK[1]]
    text = (
        'plan:\n  name: "restart api"\n  task: "restart the api after the cert rotation"\n'
        "  status: pending_approval\navailable_tools:\n  - name: rec\nactions:\n"
    )
    for i, (tag, why) in enumerate(steps, 1):
        text += f'  - id: {i}\n    tool: rec\n    why: "{why}"\n'
        text += f'    params:\n      tag: "{v}-old-{tag}"\n'
    return text


def agents(v: str) -> str:
    extra = '                service: "web"\n' if v == "gen-2p" else ""
    return (
        "plan:\n"
        '    name: "web restart"\n'
        '    task: "pick up the new feature flags on web"\n'
        "    status: pending_approval\n"
        "available_tools:\n"
        "    -   name: rec\n"
        "actions:\n"
        "    -   id: 1\n"
        "        tool: rec\n"
        f'        why: "{OWN_WHY if v == "gen-own" else "restart the service"}"\n'
        "        params:\n"
        f'            tag: "{v}"\n'
        + extra.replace("                ", "            ")
        + "".join(
            f"    -   id: {i}\n        tool: rec\n"
            f'        why: "agent: step {i} of the web flag rollout, batch {i}"\n'
            f'        params:\n            tag: "{v}-{i}"\n            batch: {i}\n'
            for i in range(2, 6)
            if v == "gen-big"
        )
    )


def _build(root: Path) -> Lab:
    news = {v: agents(v) for v in VIDS}
    for text in news.values():  # her status line, in the agent's 4-space layout
        assert "\n    status: pending_approval\n" in text, text
    olds = {v: hers(v) for v in VIDS}
    flow = Flow(Lab(root))
    return last_week(flow, olds, news, done="gen-done", sep="gen-sep", archive="gen-archive")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-generic", _build)


def test_last_weeks_restart_ran(lab: Lab) -> None:
    assert len(lab.calls("gen-done-old-restart")) == 1, lab.codes("gen-done-old")[:800]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_agents_own_plan_runs_on_her_approval(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" not in lab.codes(vid), lab.codes(vid)[:1500]
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]
