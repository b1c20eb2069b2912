"""Round 58, honest approvals wrongly refused: the agent's OWN plan that calls the team's shared
library (a pinned plan) or a tool that takes no params, in a clean-up commit that removes an
old plan of the approver's calling the same.

docs/approvals.md, "Who changed the content" (round 57): an action of hers counts when its
``why`` survives "or everything else it says (its params, a pinned plan) unchanged"; its
unchanged leaves then count. Two plans that pin one shared library (the way a team reuses a
runbook: docs/plan-format.md, "Nested plans") say the same pin; two calls of a tool without
params say the same nothing.

Config: the bench's, plus ``flush`` (the recorder with a fixed argv: a tool without params).
Owner commits ``plans/notify`` (``draft``): one ``rec`` action, ``tag: $<inputs.tag>``. Alice
commits ``plans/<v>-old``: ``lib-*``: one action pinning ``plans/notify`` with her own ``why``
and ``inputs: {tag: <v>-old}``; ``flush-*``: one ``flush`` action (no params) with her own
``why``. The agent then, in ONE clean-up commit that removes her plan, adds ``plans/<v>``
with its own name, task and ``why``:

- ``lib-rm``: one action pinning ``plans/notify``, ``inputs: {tag: <v>}``.
- ``lib-two``: an own ``rec`` action, then the pin (as ``lib-rm``).
- ``flush-rm``: one ``flush`` action.
- ``env-rm``: her plan ``rec`` with ``{tag, env: prod}``; the agent's one ``flush`` action
  (its own reason) with ``{env: prod}``: one common value in common, another tool.
- ``region-rm``: the same with ``region: eu-west-1`` (a param the docs name as shared by
  every plan run on one target).
- ``lib-sep`` (control): ``lib-rm``'s plan added in a commit that removes nothing.

A pass; Alice approves each agent plan; two passes; ``plangate audit --json``.

Asserted (the defence of honest approvals): no ``E_SELF_APPROVAL``, the plan ran
(``completed``), the audit lists the run valid.

Seen: all held: each agent plan ran on Alice's approval (``completed``), the audit lists it
valid: a shared pin or a param-less call alike does not make the agent's action hers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import Flow, last_week, plan_hash

OWNER = ("Owner", "owner@example.com")
VIDS = ["lib-rm", "lib-two", "flush-rm", "env-rm", "region-rm", "lib-sep"]
BROKEN: dict[str, object] = {}

NOTIFY = (
    'plan:\n  name: "notify"\n  task: "post to the team channel"\n  status: draft\n'
    'inputs:\n  tag: "notify-default"\navailable_tools:\n  - name: rec\n'
    'actions:\n  - id: 1\n    tool: rec\n    why: "post the message"\n'
    '    params:\n      tag: "$<inputs.tag>"\n'
)
TOOLS = "available_tools:\n  - name: rec\n  - name: flush\n"


def _pin(h: str, why: str, tag: str, i: int = 1) -> str:
    return (
        f'  - id: {i}\n    plan: {{path: plans/notify, hash: "{h}"}}\n    why: "{why}"\n'
        f'    inputs: {{tag: "{tag}"}}\n'
    )


def hers(v: str, h: str) -> str:
    text = (
        f'plan:\n  name: "{v} old"\n  task: "alice: last sprint"\n  status: pending_approval\n'
        + TOOLS
        + "actions:\n"
    )
    if v in ("env-rm", "region-rm"):
        key = "env: prod" if v == "env-rm" else "region: eu-west-1"
        return text + (
            f'  - id: 1\n    tool: rec\n    why: "alice: restart the billing workers"\n'
            f'    params: {{tag: "{v}-old", {key}}}\n'
        )
    if v.startswith("flush"):
        return (
            text
            + '  - id: 1\n    tool: flush\n    why: "alice: flush the edge caches after the rollout"\n'  # noqa: E501
        )
    return text + _pin(h, "alice: tell the team the billing rollout is done", f"{v}-old")


def agents(v: str, h: str) -> str:
    text = (
        f'plan:\n  name: "{v}"\n  task: "agent: this sprint"\n  status: pending_approval\n'
        + TOOLS
        + "actions:\n"
    )
    if v in ("env-rm", "region-rm"):
        key = "env: prod" if v == "env-rm" else "region: eu-west-1"
        return text + (
            f'  - id: 1\n    tool: flush\n    why: "agent: clear the CDN so the new flags show"\n'
            f"    params: {{{key}}}\n"
        )
    if v.startswith("flush"):
        return (
            text
            + '  - id: 1\n    tool: flush\n    why: "agent: clear caches so the new flags show"\n'
        )
    if v == "lib-two":
        return (
            text
            + (
                f'  - id: 1\n    tool: rec\n    why: "agent: bump the flag set"\n    params: {{tag: "{v}-own"}}\n'  # noqa: E501
            )
            + _pin(h, "agent: announce the new flag set", v, 2)
        )
    return text + _pin(h, "agent: announce the new flag set", v)


def _build(root: Path) -> Lab:
    r = json.dumps([sys.executable, str(root / "rec.py"), "flush"])
    log = json.dumps(str(root / "ran.log"))
    flow = Flow(Lab(root, tools=f"flush: {{kind: exec, argv: {r}, env: {{REC_LOG: {log}}}}}\n"))
    flow.commit("owner: the team's notify library", OWNER, {"notify": NOTIFY})
    h = plan_hash(flow.lab, "notify")
    olds = {v: hers(v, h) for v in VIDS}
    return last_week(flow, olds, {v: agents(v, h) for v in VIDS}, sep="lib-sep")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-sharedlib", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_agents_own_plan_runs_on_her_approval(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" not in lab.codes(vid), lab.codes(vid)[:1500]
    assert lab.status()[f"plans/{vid}"]["status"] == "completed", lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]
