"""Round 40, does a ``tools:`` approval rule see a tool the plan calls only outside its
actions' ``tool:`` (a fallback step, a plan precondition, an action precondition, a
verify poll, a retried action)?

docs/approvals.md: "``tools`` lists catalog tools the plan must call one of"; a plan's risk
is "the highest ``risk`` of the catalog tools it calls (actions, fallbacks, checks, and the
actions of the plans it nests)". A rule that asks two approvers for a plan calling
``deploy`` (or the check tool ``probe``) must not be met by one approval because the tool
sits in a fallback or a check.

Config: the bench's plus catalog tools ``deploy`` (exec, the recorder, ``risk: low``),
``probe`` (the recorder, ``idempotent: true``, ``risk: low``: a check tool) and ``boom``
(exits 1); ``approval.rules: [{match: {tools: [deploy, probe]}, require: [{count: 2}]}]``.
The agent writes each plan; the controller freezes them; Alice alone approves each.

- ``control-action``: action 1 calls ``deploy``.
- ``fallback``: action 1 calls ``boom`` with ``on_failure: fallback``; the fallback step
  calls ``deploy``.
- ``plan-pre``: a plan-level precondition calls ``probe``; the action calls ``rec``.
- ``action-pre``: action 1's precondition calls ``probe``.
- ``verify``: action 1's ``verify`` polls ``probe``.
- ``fallback-pre``: the fallback step of a failing ``boom`` has a precondition on ``probe``
  and calls ``rec``.
- ``fallback-verify``: the fallback step's ``verify`` polls ``probe``.
- ``nest-fallback`` / ``nest-plan-pre`` / ``nest-verify-lib``: the parent's one action runs
  a pinned plan (frozen, never approved alone) built like ``fallback`` / ``plan-pre`` /
  ``verify``; the parent itself names no rule tool.
(A nesting action's own ``verify`` with a tool is refused ``E_SCHEMA_INVALID``, and a
parent pinning a plan that itself nests one is ``invalid`` ("one level only"): not
variants.)

Asserted (the defence): one approval does not meet the rule: the controller commits
``partial`` (no ``start``), and neither ``deploy`` nor ``probe`` nor ``rec`` ran for the
plan. Then Bob approves too and the plan starts (the quorum is reachable; the bench).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab
from test_round2_execution_kit import shared

FOUND: dict[str, pytest.MarkDecorator] = {}

HEAD = """\
plan:
  name: "{vid}"
  task: "round 40 rule tools {vid}"
  status: pending_approval
available_tools:
  - name: rec
  - name: deploy
  - name: probe
  - name: boom
"""
CHECK = '{{tool: probe, params: {{tag: "{vid}-probe"}}, expect: {{path: $.json.ok, equals: true}}}}'
BODIES = {
    "control-action": """\
actions:
  - id: 1
    tool: deploy
    why: "deploy"
    params: {{tag: "{vid}-deploy"}}
""",
    "fallback": """\
actions:
  - id: 1
    tool: boom
    why: "fails"
    on_failure: fallback
    fallback:
      - {{id: "1.1", tool: deploy, why: "deploy", params: {{tag: "{vid}-deploy"}}}}
""",
    "plan-pre": """\
preconditions:
  - CHECK
actions:
  - id: 1
    tool: rec
    why: "rec"
    params: {{tag: "{vid}"}}
""",
    "action-pre": """\
actions:
  - id: 1
    tool: rec
    why: "rec"
    params: {{tag: "{vid}"}}
    preconditions:
      - CHECK
""",
    "verify": """\
actions:
  - id: 1
    tool: rec
    why: "rec"
    params: {{tag: "{vid}"}}
    verify:
      tool: probe
      params: {{tag: "{vid}-probe"}}
      expect: {{path: $.json.ok, equals: true}}
      timeout: 2
      interval: 0.2
""",
    "fallback-pre": """\
actions:
  - id: 1
    tool: boom
    why: "fails"
    on_failure: fallback
    fallback:
      - id: "1.1"
        tool: rec
        why: "rec"
        params: {{tag: "{vid}"}}
        preconditions:
          - CHECK
""",
    "fallback-verify": """\
actions:
  - id: 1
    tool: boom
    why: "fails"
    on_failure: fallback
    fallback:
      - id: "1.1"
        tool: rec
        why: "rec"
        params: {{tag: "{vid}"}}
        verify:
          tool: probe
          params: {{tag: "{vid}-probe"}}
          expect: {{path: $.json.ok, equals: true}}
          timeout: 2
          interval: 0.2
""",
}
LIBS = {"lib-fallback": "fallback", "lib-plan-pre": "plan-pre", "lib-verify": "verify"}
NEST = """\
actions:
  - id: 1
    plan: {{path: plans/{lib}, hash: "{hash}"}}
    why: "nested"
"""
PARENTS = {
    "nest-fallback": ("lib-fallback", NEST),
    "nest-plan-pre": ("lib-plan-pre", NEST),
    "nest-verify-lib": ("lib-verify", NEST),
}
VARIANTS = [*BODIES, *PARENTS]


def _text(vid: str) -> str:
    return (HEAD + BODIES[vid].replace("CHECK", CHECK)).format(vid=vid)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = json.dumps({"REC_LOG": str(lab.log)})
    boom = json.dumps([sys.executable, "-c", "import sys; sys.exit(1)"])
    lab.write_config(
        approval="rules:\n  - match: {tools: [deploy, probe]}\n    require: [{count: 2}]\n",
        tools=(
            f"deploy: {{kind: exec, argv: {rec}, env: {env}, risk: low}}\n"
            f"probe: {{kind: exec, argv: {rec}, env: {env}, risk: low, idempotent: true}}\n"
            f"boom: {{kind: exec, argv: {boom}, risk: low}}\n"
        ),
    )
    for vid in BODIES:
        lab.write(vid, _text(vid))
    for lib, like in LIBS.items():
        lab.write(lib, (HEAD + BODIES[like].replace("CHECK", CHECK)).format(vid=lib))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid, (lib, body) in PARENTS.items():
        digest = lab.plan(lib)["frozen"]["hash"]
        lab.write(vid, (HEAD + body).format(vid=vid, lib=lib, hash=digest))
    lab.commit("agent adds parents", AGENT)
    lab.run()
    lab.frozen = {v: lab.plan(v)["plan"]["status"] for v in VARIANTS}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        lab.approve(vid, ALICE)
    lab.run()
    lab.after_one = {  # type: ignore[attr-defined]
        v: {
            "subjects": lab.subjects(v),
            "calls": [r["argv"][0] for r in _rows(lab) if r["argv"][0].startswith(_tags(v))],
        }
        for v in VARIANTS
    }
    for vid in VARIANTS:
        if lab.plan(vid)["plan"]["status"] in ("pending_approval", "approved"):
            lab.approve(vid, BOB)
    lab.run()
    lab.after_two = {v: lab.subjects(v) for v in VARIANTS}  # type: ignore[attr-defined]
    return lab


def _tags(vid: str) -> tuple[str, ...]:
    lib = PARENTS.get(vid, ("",))[0]
    return (vid, lib) if lib else (vid,)


def _rows(lab: Lab) -> list[dict[str, Any]]:
    if not lab.log.exists():
        return []
    return [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-ruletools", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_every_plan_froze(lab: Lab) -> None:
    assert set(lab.frozen.values()) == {"pending_approval"}, lab.frozen  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_one_approval_does_not_meet_the_rule(lab: Lab, vid: str) -> None:
    seen = lab.after_one[vid]  # type: ignore[attr-defined]
    assert not any(s.startswith("plangate: start ") for s in seen["subjects"]), (
        seen,
        lab.codes(vid),
    )
    assert seen["calls"] == [], seen
    assert any(s.startswith("plangate: partial ") for s in seen["subjects"]), seen


@pytest.mark.parametrize("vid", VARIANTS)
def test_two_approvals_start_it(lab: Lab, vid: str) -> None:
    subjects = lab.after_two[vid]  # type: ignore[attr-defined]
    assert any(s.startswith("plangate: start ") for s in subjects), (subjects, lab.codes(vid))
