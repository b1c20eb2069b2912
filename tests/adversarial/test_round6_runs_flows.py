# ruff: noqa: E501  (plan texts and tool argv are kept on one line as written)
"""Round 6, what runs: outside data routed to a sensitive param through the parts of a plan
other than an action's own params (a fallback step, a check's params, a fallback step's
check, a nested plan's inputs, a fallback step under a guarded action), which the
reviewer's ``show`` text does not even print for fallback steps (test_round6_runs_content).

Action 1 reads an "email" whose content the attacker wrote (an ``emit`` tool, untrusted by
default); the sensitive tools are ``mail`` (``to``) and the check tool ``fetchc`` (``url``).
The defence: each route is E_UNGUARDED_FLOW at validation (status ``invalid``), and even
approved, the attacker's address never reaches a tool.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

EVIL = "attacker@evil.example.net"
EMIT = "import sys\nsys.stdout.write(sys.argv[1])\n"
HEAD = """\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools:
  - name: emit
  - name: fail
  - name: mail
  - name: fetchc
  - name: rec
actions:
  - id: 1
    tool: emit
    why: read an email
    params: {{out: '{{"v": "attacker@evil.example.net"}}'}}
    outputs:
      - {{name: v, path: "$.json.v"}}
"""
ROUTES = {
    "fallback-step": """\
  - id: 2
    tool: fail
    why: fails
    on_failure: fallback
    fallback:
      - {id: "2.1", tool: mail, why: "reply", params: {tag: fallback-step, to: "$<actions[1].outputs.v>"}}
""",
    "fallback-step-whole-result": """\
  - id: 2
    tool: fail
    why: fails
    on_failure: fallback
    fallback:
      - {id: "2.1", tool: mail, why: "reply", params: {tag: fallback-step-whole-result, to: "$<actions[1].result.json.v>"}}
""",
    "fallback-under-guarded-action": """\
  - id: 2
    tool: mail
    why: reply if it is a customer
    params: {tag: fallback-under-guarded-action-main, to: "$<actions[1].outputs.v>"}
    guards:
      - {param: to, matches: "[a-z]+@customer\\\\.example"}
    on_failure: fallback
    fallback:
      - {id: "2.1", tool: mail, why: "reply anyway", params: {tag: fallback-under-guarded-action, to: "$<actions[1].outputs.v>"}}
""",
    "precondition": """\
  - id: 2
    tool: rec
    why: main
    params: {tag: precondition-main}
    preconditions:
      - {tool: fetchc, params: {tag: precondition, url: "$<actions[1].outputs.v>"}, expect: {path: $.json.ok, equals: true}}
""",
    "verify": """\
  - id: 2
    tool: rec
    why: main
    params: {tag: verify-main}
    verify:
      tool: fetchc
      params: {tag: verify, url: "$<actions[1].outputs.v>"}
      expect: {path: $.json.ok, equals: true}
      timeout: 2
      interval: 1
""",
    "fallback-precondition": """\
  - id: 2
    tool: fail
    why: fails
    on_failure: fallback
    fallback:
      - id: "2.1"
        tool: rec
        why: "fb"
        params: {tag: fallback-precondition-step}
        preconditions:
          - {tool: fetchc, params: {tag: fallback-precondition, url: "$<actions[1].outputs.v>"}, expect: {path: $.json.ok, equals: true}}
""",
    "fallback-verify": """\
  - id: 2
    tool: fail
    why: fails
    on_failure: fallback
    fallback:
      - id: "2.1"
        tool: rec
        why: "fb"
        params: {tag: fallback-verify-step}
        verify:
          tool: fetchc
          params: {tag: fallback-verify, url: "$<actions[1].outputs.v>"}
          expect: {path: $.json.ok, equals: true}
          timeout: 2
          interval: 1
""",
    "nested-input": """\
  - id: 2
    plan: {{path: plans/common/child, hash: "{pin}"}}
    why: nested
    inputs: {{to: "$<actions[1].outputs.v>"}}
""",
}
CHILD = """\
plan:
  name: child
  task: c
  status: draft
inputs:
  to: nobody@example.com
available_tools:
  - name: mail
actions:
  - id: 1
    tool: mail
    why: send
    params: {tag: nested-input, to: "$<inputs.to>"}
"""


def _build(root: Path) -> Lab:
    (root / "emit.py").write_text(EMIT)
    emit = json.dumps([sys.executable, str(root / "emit.py"), "{out}"])
    rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    log = json.dumps(str(root / "ran.log"))
    lab = Lab(
        root,
        tools=f"""\
emit: {{kind: exec, argv: {emit}}}
fail: {{kind: exec, argv: ['false']}}
mail: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}, sensitive: [to]}}
fetchc: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}, idempotent: true, risk: low, sensitive: [url]}}
""",
    )
    lab.write("common/child", CHILD)
    lab.commit("child")
    pin = lab.cli("hash", str(lab.repo / "plans/common/child")).stdout.strip()
    for tag, route in ROUTES.items():
        lab.write(
            tag, HEAD.format(tag=tag) + (route.format(pin=pin) if tag == "nested-input" else route)
        )
    lab.commit("routes")
    lab.run()
    lab.first = {tag: dict(lab.status()[f"plans/{tag}"]) for tag in ROUTES}  # type: ignore[attr-defined]
    for tag in ROUTES:  # approved anyway, whatever the controller said
        lab.approve(tag, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r6-runs-flows", _build)


@pytest.mark.parametrize("route", list(ROUTES))
def test_an_unguarded_route_is_refused_at_validation(lab: Lab, route: str) -> None:
    row = lab.first[route]  # type: ignore[attr-defined]
    assert row["status"] == "invalid" and "E_UNGUARDED_FLOW" in json.dumps(row) + json.dumps(
        lab.plan(route)
    ), row


@pytest.mark.parametrize("route", list(ROUTES))
def test_the_attackers_address_never_reaches_a_tool(lab: Lab, route: str) -> None:
    if lab.log.exists():
        assert EVIL not in lab.log.read_text()
    assert lab.status()[f"plans/{route}"]["status"] != "completed"
