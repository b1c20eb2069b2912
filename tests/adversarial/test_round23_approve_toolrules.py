"""Round 23, quorum: a ``tools:`` approval rule fits a plan whatever place it calls the tool from.

Config: the bench's, plus two catalog tools and two rules:

- ``danger`` (exec, ``risk: medium``) and ``probe`` (exec, ``idempotent: true``,
  ``risk: low``: a check tool), both the recording tool;
- ``{match: {tools: [danger]}, require: [{count: 2}]}`` and
  ``{match: {tools: [probe]}, require: [{count: 2}]}``.

The agent writes each plan (the only action calls ``rec``/``echo``), the controller freezes
it, Alice alone approves it. The rule's tool is called only from:

- ``direct``: an action (the baseline);
- ``fb-step``: a fallback step of an action (``on_failure: fallback``);
- ``pre-plan``: a plan-level precondition (``probe``);
- ``pre-action``: an action's precondition (``probe``);
- ``verify``: an action's ``verify`` poll (``probe``);
- ``fb-pre``: a precondition of a fallback step (``probe``);
- ``nest-act``: an action of a pinned nested plan (``danger``);
- ``nest-fb``: a fallback step of a pinned nested plan (``danger``);
- ``nest-pre``: a plan-level precondition of a pinned nested plan (``probe``);
- ``nest-verify``: a verify poll of a pinned nested plan's action (``probe``).

Defence: one approval is not the quorum: the plan is ``partial`` (Alice's vote only), never
started, and neither tool is called.

Results: all ten held (``partial`` with Alice's vote, nothing called).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

RULES = (
    "rules:\n"
    "  - match: {tools: [danger]}\n    require: [{count: 2}]\n"
    "  - match: {tools: [probe]}\n    require: [{count: 2}]\n"
)


def _tools(lab: Lab) -> str:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = json.dumps(str(lab.log))
    return (
        f"danger: {{kind: exec, argv: {rec}, env: {{REC_LOG: {env}}}, risk: medium}}\n"
        f"probe: {{kind: exec, argv: {rec}, env: {{REC_LOG: {env}}}, risk: low,"
        " idempotent: true}\n"
    )


HEAD = """\
plan:
  name: "{tag}"
  task: "attack variant {tag}"
  status: {status}
available_tools:
  - name: echo
  - name: danger
  - name: probe
"""
PROBE = '{{tool: probe, params: {{tag: "{tag}"}}, expect: {{path: $.json.ok, equals: true}}}}'

BODIES = {
    "direct": """\
actions:
  - id: 1
    tool: danger
    why: "the tool itself"
    params: {{tag: "{tag}"}}
""",
    "fb-step": """\
actions:
  - id: 1
    tool: echo
    why: "may fail"
    params: {{x: 1}}
    on_failure: fallback
    fallback:
      - {{id: "1.1", tool: danger, why: "fallback", params: {{tag: "{tag}"}}}}
""",
    "pre-plan": """\
preconditions:
  - PROBE
actions:
  - id: 1
    tool: echo
    why: "harmless"
    params: {{x: 1}}
""",
    "pre-action": """\
actions:
  - id: 1
    tool: echo
    why: "harmless"
    params: {{x: 1}}
    preconditions:
      - PROBE
""",
    "verify": """\
actions:
  - id: 1
    tool: echo
    why: "harmless"
    params: {{x: 1}}
    verify:
      tool: probe
      params: {{tag: "{tag}"}}
      expect: {{path: $.json.ok, equals: true}}
      timeout: 2
      interval: 1
""",
    "fb-pre": """\
actions:
  - id: 1
    tool: echo
    why: "may fail"
    params: {{x: 1}}
    on_failure: fallback
    fallback:
      - id: "1.1"
        tool: echo
        why: "fallback"
        params: {{x: 2}}
        preconditions:
          - PROBE
""",
}
NESTED = {
    "nest-act": BODIES["direct"],
    "nest-fb": BODIES["fb-step"],
    "nest-pre": BODIES["pre-plan"],
    "nest-verify": BODIES["verify"],
}
CASES = list(BODIES) + list(NESTED)


def _text(tag: str, body: str, status: str) -> str:
    return (HEAD + body).replace("PROBE", PROBE).format(tag=tag, status=status)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    lab.write_config(approval=RULES, tools=_tools(lab))
    for vid, body in BODIES.items():
        lab.write(f"t/{vid}", _text(vid, body, "pending_approval"))
    for vid, body in NESTED.items():
        lab.write(f"common/{vid}", _text(vid, body, "draft"))
    lab.commit("agent adds sub-plans", AGENT)
    for vid in NESTED:
        result = lab.cli("hash", "--config", str(lab.config), f"plans/common/{vid}", cwd=lab.repo)
        assert result.returncode == 0, result.stdout + result.stderr
        digest = result.stdout.strip().split()[-1]
        lab.write(
            f"t/{vid}",
            HEAD.format(tag=vid, status="pending_approval")
            + "actions:\n  - id: 1\n"
            + f'    plan: {{path: plans/common/{vid}, hash: "{digest}"}}\n'
            + '    why: "the usual way"\n',
        )
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in CASES:
        lab.approve(f"t/{vid}", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-toolrules", _build)


@pytest.mark.parametrize("vid", CASES)
def test_a_tools_rule_fits_every_call_site(lab: Lab, vid: str) -> None:
    slug = f"t/{vid}"
    assert lab.plan(slug).get("frozen"), lab.codes(slug)
    assert lab.calls(vid) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    approval = lab.plan(slug).get("approval") or {}
    assert approval.get("status") == "partial", lab.codes(slug)
