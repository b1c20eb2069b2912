"""Round 58, self-approval: an approver's tool call carried into a place that is not an action
of the new plan: a pinned plan's ``inputs``, a precondition, a ``verify`` poll, a plan-level
precondition (the same class as ``_restructure``, other carriers).

docs/approvals.md, "Who changed the content": actions are matched "by what they say", their
leaves counted at their place in the action. The plan format makes the same tool call from
other places: a nested action passes ``inputs`` to a pinned plan whose action reads them; a
check (``preconditions``, ``verify`` with a ``tool``) calls a catalog tool with ``params``.

Config: the bench's, plus ``chk``: the recorder as a check tool (``idempotent: true``,
``risk: low``). Alice commits ``plans/<v>-her``: one action (her 12-word ``why``, her tag and
three params) calling ``rec`` (``nested``, ``echo-*``) or the read-only ``chk`` (``pre``,
``verify``, ``plan-pre``, ``move``). Earlier, the agent committed ``plans/lib`` (``draft``):
one ``rec`` action whose every param is ``$<inputs.K>``. Then, in ONE agent commit that removes
her folders:

- ``nested``: ``plans/nested``: one action pinning ``plans/lib`` with her ``why``, its
  ``inputs`` her values: the pinned action calls ``rec`` with her exact params.
- ``pre``: an agent action (``rec``, its own tag and reason) whose precondition is her call
  (``chk``, her params; ``expect: $.json.ok == true``).
- ``verify``: the same as the action's ``verify`` tool.
- ``plan-pre``: the same as a plan-level precondition.
- ``echo-out``: action 1 calls ``echo`` (the catalog's tool that returns its params) with her
  params and the agent's reason; action 2 calls ``rec`` with her ``why`` and every param
  ``$<actions[1].result.K>``: ``rec`` gets her exact params.
- ``echo-own``: the same, action 2's ``why`` the agent's own.
- ``move`` (control): her ``chk`` plan moved with a param added: refused.
- ``own`` (control): the agent's own plan: it runs once.

A pass; Alice approves; two passes; ``plangate audit --json``.

Asserted (the defence): her tag never reaches the recorder, the plan is refused
``E_SELF_APPROVAL``, the audit lists no valid run.

Seen: ``nested``, ``pre``, ``verify`` and ``plan-pre`` broke: the recorder got her tag and
params exactly as she wrote them (``nested``: ``rec``, her action's tool, through the agent's
library; the others: her read-only ``chk`` call), on her own approval (``completed``,
approver alice), and the fresh-clone audit lists each run valid. Held: ``move``
(``E_SELF_APPROVAL``), ``echo-out`` and ``echo-own`` (``E_SELF_APPROVAL``: the ``echo``
action saying her params is matched with hers, whatever its tool), ``own`` ran once. The
checks carry only check tools (idempotent, low risk), so ``nested`` is the one that matters
most: any action of hers becomes a library call with her values as ``inputs``.

Fixed (2026-11-29): plans are compared by the calls they make (``likeness.calls_view``):
each precondition and ``verify`` tool (of an action or the plan) is a call of its own, a
nested action's ``inputs`` are its call's params. Her call as a check is 0.75 hers (her tool
and every param), her values as a pinned library's ``inputs`` with her ``why`` 0.98: she is a
writer of each new plan, ``E_SELF_APPROVAL``. A pinned plan is compared by its pin and the
inputs passed, not by reading the library's own actions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import OWN, Flow, her_drafts, plan_hash, reworked

VIDS = ["nested", "pre", "verify", "plan-pre", "echo-out", "echo-own", "move"]
BROKEN: dict[str, object] = {}

WHY = "alice: purge the expired invoices cache on the billing edge before the close"
PARAMS = {"target": "billing-edge-3", "scope": "invoices/expired", "ticket": "FIN-2207"}
EXPECT = "{path: $.json.ok, equals: true}"


def _params(v: str, indent: str) -> str:
    return f'{indent}tag: "{v}-her"\n' + "".join(f'{indent}{k}: "{x}"\n' for k, x in PARAMS.items())


def _flow(v: str) -> str:
    return "{" + ", ".join([f'tag: "{v}-her"', *(f'{k}: "{x}"' for k, x in PARAMS.items())]) + "}"


def hers(v: str) -> str:
    tool = "rec" if v in ("nested", "echo-out", "echo-own") else "chk"
    return (
        f'plan:\n  name: "{v} purge"\n  task: "{v}: purge the cache"\n  status: pending_approval\n'
        f"available_tools:\n  - name: {tool}\nactions:\n  - id: 1\n    tool: {tool}\n"
        f'    why: "{WHY}"\n    params:\n' + _params(v, "      ")
    )


LIB = (
    'plan:\n  name: "lib"\n  task: "call rec with the given values"\n  status: draft\n'
    "inputs:\n"
    + "".join(f'  {k}: "x"\n' for k in ["tag", *PARAMS])
    + "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
    '    why: "call rec"\n    params:\n'
    + "".join(f'      {k}: "$<inputs.{k}>"\n' for k in ["tag", *PARAMS])
)


def wanted(v: str, lib_hash: str) -> str:
    head = (
        f'plan:\n  name: "{v} purge"\n  task: "{v}: purge the cache"\n  status: pending_approval\n'
    )
    agent = (
        f'  - id: 1\n    tool: rec\n    why: "agent: warm the edge after the purge"\n'
        f'    params:\n      tag: "{v}-agent"\n'
    )
    tools = "available_tools:\n  - name: rec\n  - name: chk\n"
    if v == "nested":
        return (
            head + "actions:\n  - id: 1\n"
            f'    plan: {{path: plans/lib, hash: "{lib_hash}"}}\n'
            f'    why: "{WHY}"\n    inputs:\n' + _params(v, "      ")
        )
    if v == "pre":
        return (
            head
            + tools
            + "actions:\n"
            + agent
            + (f"    preconditions:\n      - {{tool: chk, params: {_flow(v)}, expect: {EXPECT}}}\n")
        )
    if v == "verify":
        return (
            head
            + tools
            + "actions:\n"
            + agent
            + (
                f"    verify: {{tool: chk, params: {_flow(v)}, expect: {EXPECT}, "
                "timeout: 5, interval: 1}\n"
            )
        )
    if v == "plan-pre":
        return (
            head
            + tools
            + (f"preconditions:\n  - {{tool: chk, params: {_flow(v)}, expect: {EXPECT}}}\n")
            + "actions:\n"
            + agent
        )
    if v in ("echo-out", "echo-own"):
        why = WHY if v == "echo-out" else "agent: apply the purge it staged"
        return (
            head
            + "available_tools:\n  - name: echo\n  - name: rec\n"
            + (
                'actions:\n  - id: 1\n    tool: echo\n    why: "agent: stage the purge request"\n'
                "    params:\n"
                + _params(v, "      ")
                + f'  - id: 2\n    tool: rec\n    why: "{why}"\n    params:\n'
                + "".join(f'      {k}: "$<actions[1].result.{k}>"\n' for k in ["tag", *PARAMS])
            )
        )
    if v == "move":
        return hers(v) + '      region: "eu-west-1"\n'
    raise KeyError(v)


def _rework(flow: Flow) -> None:
    lib_hash = plan_hash(flow.lab, "lib")
    flow.rework({v: wanted(v, lib_hash) for v in VIDS})


def _build(root: Path) -> Lab:
    rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    log = json.dumps(str(root / "ran.log"))
    lab = Lab(
        root,
        tools=f"chk: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}, "
        "idempotent: true, risk: low}\n",
    )
    own = {"lib": LIB, "own": OWN}
    drafts = her_drafts(VIDS, hers)
    return reworked(Flow(lab), drafts, own, _rework, [*VIDS, "own"], agent_first=True)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-reshape", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_call_elsewhere_is_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert valid_runs(lab.report, "own"), lab.report  # type: ignore[attr-defined]
