"""Round 59, honest approvals wrongly refused: a recurring plan's TEMPLATE reason (six words
or more) shared by last week's plan of an approver and this week's plan of the agent.

docs/approvals.md, "Who changed the content" (round 58, ``likeness.why_strength``): a ``why``
is evidence by its words over 6, "reasons of 6 words or more count whole as before": an
action of hers survives on its ``why`` alone, then its unchanged leaves count one by one; the
template's strings (``plan.name``, ``plan.task``) and the layout weigh 0.1. A recurring plan
whose reason is a fixed sentence of its runbook ("restart the api service so it loads the
rotated certificates") is then hers whenever it has few params of its own: the shared
sentence (1) and the template (0.5) over the new plan's weight (that plus one tag: 2.5) is
0.6, though the call it makes (its tag, its week) is the agent's alone. The docs' own
figure: "last week's plan of a template against this week's, the agent's own" is at most
0.09, no move.

Lab: the bench's config. Alice commits last week's ``plans/<v>-old`` (the runbook's name,
task and reason, her tag). The agent then, in ONE clean-up commit, removes her plan and adds
this week's ``plans/<v>`` (same name, task and reason; its own tag):

- ``t-rm``: her plan a pending draft, ``git rm``'d.
- ``t-archive``: her draft moved out to ``archive/<v>-old/PLAN.yml``.
- ``t-done``: her plan approved by Bob and run before the clean-up (last week's restart).
- ``t-layout``: this week's plan in a 4-space layout with its own name and task, only the
  runbook's reason in common.
- ``t-week``: this week's plan with a second param of its own (``week: 48``).
- ``t-own`` (control): the same commit, the agent's plan with its own reason.
- ``t-sep`` (control): this week's plan added in a commit of its own (hers removed earlier).

A pass; Alice approves each agent plan; two passes; ``plangate audit --json``.

Asserted (the defence of honest approvals): the agent's plan runs once on Alice's approval,
no ``E_SELF_APPROVAL``, the audit lists the run valid.

Seen: ``t-rm``, ``t-archive``, ``t-done``, ``t-layout`` and ``t-week`` broke (wrongly
refused): Alice's approval of this week's plan is ``E_SELF_APPROVAL`` ("alice wrote or changed
this plan's content"), the plan never runs. git pairs them at 50 (under 66) or not at all
(``t-layout``: 4-space layout, its own name and task, only the reason in common), so the
content rule decides: a six-word-or-more reason counts whole, and the one or two params that
say what the plan does are not enough to outweigh it. Round 58 fixed this for a three-word
stock reason only. Held: ``t-own`` (own reason) and ``t-sep`` (no removal in the commit) ran
once, audit valid; last week's run ran once. Fix direction: a reason shared by plans whose
calls differ in every param is template text (weigh it as ``plan.name``/``plan.task``), or an
action should need a param of hers kept, not its reason alone.

Fixed (2026-11-29): a ``why`` is at most half the evidence however long
(``likeness.WHY_MAX``, 0.5): an action of hers survives on it only with at least half of what
it runs kept (both ways). This week's plan keeps none of her run (its tag, its week): 0.12
hers (0.6 before), under 0.5; Alice's approval runs it once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import Flow, last_week

VIDS = ["t-rm", "t-archive", "t-done", "t-layout", "t-week", "t-own", "t-sep"]
BROKEN: dict[str, object] = {}

WHY = "restart the api service so it loads the rotated certificates"
OWN_WHY = "agent: reload web with this week's feature flags"
NAME = "weekly api restart"
TASK = "restart the api after the weekly certificate rotation"


def plan(tag: str, why: str = WHY, extra: str = "") -> str:
    return (
        f'plan:\n  name: "{NAME}"\n  task: "{TASK}"\n'
        "  status: pending_approval\navailable_tools:\n  - name: rec\nactions:\n"
        f'  - id: 1\n    tool: rec\n    why: "{why}"\n'
        f'    params:\n      tag: "{tag}"\n' + extra
    )


def agents(v: str, kind: str | None = None) -> str:
    if (kind or v) == "t-layout":
        return (
            "plan:\n"
            '    name: "api restart, week 48"\n'
            '    task: "pick up the certificates rotated on monday"\n'
            "    status: pending_approval\n"
            "available_tools:\n"
            "    -   name: rec\n"
            "actions:\n"
            "    -   id: 1\n"
            "        tool: rec\n"
            f'        why: "{WHY}"\n'
            "        params:\n"
            f'            tag: "{v}"\n'
        )
    if v == "t-week":
        return plan(v, extra="      week: 48\n")
    if v == "t-own":
        return plan(v, why=OWN_WHY)
    return plan(v)


def _build(root: Path) -> Lab:
    news = {v: agents(v) for v in VIDS}
    olds = {v: plan(f"{v}-old") for v in VIDS}
    flow = Flow(Lab(root))
    return last_week(flow, olds, news, done="t-done", sep="t-sep", archive="t-archive")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-template", _build)


def test_last_weeks_restart_ran(lab: Lab) -> None:
    assert len(lab.calls("t-done-old")) == 1, lab.codes("t-done-old")[:800]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_this_weeks_plan_runs_on_her_approval(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" not in lab.codes(vid), lab.codes(vid)[:1500]
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]
