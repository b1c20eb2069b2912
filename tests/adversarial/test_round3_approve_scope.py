# ruff: noqa: E501  (plan text reads best on one line)
"""Round 3, approval side: the rule a plan falls under (SPEC §11) is the one its real content
fits, so no plan gets by with fewer approvals than its rule asks.

Rules in the config (first match decides): a plan calling ``peek`` needs two approvals; a
plan where outside data reaches a ``sensitive`` param (guarded or not) needs two; a plan under
``plans/two/**`` needs two. Only Alice approves each attack.

Attacks: the untrusted-to-sensitive flow exists only inside a nested plan (between its own
actions, or through the ``inputs`` the parent passes), only in a check tool's params
(precondition, verify), only in a fallback step, only through an ``inherit`` tool; the nested
plan holding ``peek`` (or the flow) is deleted before Alice approves the parent (the pin cannot
be read at the approving commit: the rule cannot see its tools) and restored after the start,
then Alice resumes the failed run (a resume needs one approval); a plan whose folder is
exactly ``plans/two``. Defence: the plan never starts with one approval, nothing of it runs.
Controls: a plan without flow runs on Alice's approval; a direct flow and a plan under
``plans/two/x`` wait for a second approval.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, play
from test_round2_approval_authors import shared_lab

Step = Callable[[Lab, str], None]

RULES = """\
rules:
  - match: {tools: [peek]}
    require: [{count: 2}]
  - match: {flows: untrusted_to_sensitive}
    require: [{count: 2}]
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
"""


def tools(lab: Lab) -> str:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    return (
        f"peek: {{kind: exec, argv: {rec}, {env}, risk: low, idempotent: true}}\n"
        f"send: {{kind: exec, argv: {rec}, {env}, sensitive: [to]}}\n"
        f"probe: {{kind: exec, argv: {rec}, {env}, risk: low, idempotent: true, sensitive: [to]}}\n"
        "fmt: {kind: echo, output_trust: inherit}\n"
    )


HEAD = """\
plan:
  name: "{tag}"
  task: "round 3 scope variant {tag}"
  status: {status}
{inputs}available_tools:
  - name: rec
  - name: send
  - name: probe
  - name: peek
  - name: fmt
actions:
"""
SRC = """\
  - id: 1
    tool: rec
    why: "read outside data"
    params: {tag: "@TAG@"}
    outputs:
      - {name: who, path: "$.json.echo.tag"}
"""
GUARD = '[{param: to, matches: "^.*$"}]'
TO = '"$<actions[1].outputs.who>"'
CHECK = (
    '{tool: probe, params: {tag: "@TAG@-check", to: '
    + TO
    + "}, guards: "
    + GUARD
    + ", expect: {path: $.json.ok, equals: true}"
)
ACT2 = '  - id: 2\n    tool: rec\n    why: "act"\n    params: {tag: "@TAG@-2"}\n'
SEND2 = (
    '  - id: 2\n    tool: send\n    why: "send"\n    params: {tag: "@TAG@-2", to: '
    + TO
    + "}\n    guards: "
    + GUARD
    + "\n"
)

BODIES: dict[str, str] = {
    # action 2 sends to outside data (the sanity case: the flow rule must bite)
    "direct": SRC + SEND2,
    # no flow at all (control)
    "none": SRC
    + '  - id: 2\n    tool: send\n    why: "send"\n    params: {tag: "@TAG@-2", to: "ops@example.com"}\n',
    "precondition": SRC + ACT2 + "    preconditions:\n      - " + CHECK + "}\n",
    "verify": SRC + ACT2 + "    verify: " + CHECK + ", timeout: 5, interval: 1}\n",
    "fallback": SRC
    + '  - id: 2\n    tool: fmt\n    why: "may fail"\n    params: {tag: "@TAG@-fmt"}\n    on_failure: fallback\n'
    + '    fallback:\n      - {id: "2.1", tool: send, why: "tell them", params: {tag: "@TAG@-fb", to: '
    + TO
    + "}, guards: "
    + GUARD
    + "}\n",
    "inherit": SRC
    + '  - id: 2\n    tool: fmt\n    why: "format"\n    params: {tag: "@TAG@-fmt", v: '
    + TO
    + '}\n    outputs:\n      - {name: v, path: "$.v"}\n'
    + '  - id: 3\n    tool: send\n    why: "send"\n    params: {tag: "@TAG@-2", to: "$<actions[2].outputs.v>"}\n    guards: '
    + GUARD
    + "\n",
    # a library plan: its own action 1 feeds its sensitive action 2
    "lib-flow": SRC + SEND2,
    # a library plan whose sensitive param comes from its input
    "lib-input": '  - id: 1\n    tool: send\n    why: "send"\n    params: {tag: "@TAG@-1", to: "$<inputs.to>"}\n    guards: '
    + GUARD
    + "\n",
    # a library plan calling the rule's tool
    "lib-peek": '  - id: 1\n    tool: peek\n    why: "look"\n    params: {tag: "@TAG@-1"}\n',
    # a parent: its own step, then the library (optionally fed outside data)
    "parent": SRC
    + '  - id: 2\n    plan: {path: plans/@LIB@, hash: "@PIN@"}\n    why: "run the library"\n',
    "parent-input": SRC
    + '  - id: 2\n    plan: {path: plans/@LIB@, hash: "@PIN@"}\n    why: "run the library"\n    inputs: {to: '
    + TO
    + "}\n",
    "plain": '  - id: 1\n    tool: rec\n    why: "record"\n    params: {tag: "@TAG@"}\n',
}


def text(
    tag: str, body: str, status: str = "pending_approval", lib: str = "", pin: str = ""
) -> str:
    inputs = 'inputs:\n  to: "nobody@example.com"\n' if body == "lib-input" else ""
    head = HEAD.format(tag=tag, status=status, inputs=inputs)
    return head + BODIES[body].replace("@TAG@", tag).replace("@LIB@", lib).replace("@PIN@", pin)


def submit(body: str) -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.write(vid, text(vid, body))
        lab.commit(f"add {vid}", AGENT)

    return step


def lib_path(vid: str) -> Path:
    return Path("plans") / f"{vid}-lib" / "PLAN.yml"


def submit_nested(lib: str, parent: str = "parent") -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.write(f"{vid}-lib", text(f"{vid}-lib", lib, status="draft"))
        pin = lab.cli("hash", str(lab.repo / "plans" / f"{vid}-lib")).stdout.strip()
        assert pin.startswith("sha256:"), pin
        lab.write(vid, text(vid, parent, lib=f"{vid}-lib", pin=pin))
        lab.commit(f"add {vid} and its library", AGENT)

    return step


def delete_lib(lab: Lab, vid: str) -> None:
    lab.git("rm", "-q", "-r", str(lib_path(vid).parent))
    lab.commit(f"drop {vid}-lib for now", AGENT)


def restore_lib(lab: Lab, vid: str) -> None:
    first = lab.git("log", "--format=%H", "--diff-filter=A", "--", str(lib_path(vid))).split()[-1]
    lab.git("checkout", first, "--", str(lib_path(vid)))
    lab.commit(f"bring {vid}-lib back", AGENT)


def approve(who: tuple[str, str] = ALICE) -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.approve(vid, who)

    return step


def approve_if(status: str, who: tuple[str, str] = ALICE) -> Step:
    """Approve (a resume or a gate) only if the plan reached ``status``."""

    def step(lab: Lab, vid: str) -> None:
        if lab.plan(vid)["plan"]["status"] == status:
            lab.approve(vid, who)

    return step


ATTACKS: dict[str, list[Step]] = {
    "flow/nested-internal": [submit_nested("lib-flow"), approve()],
    "flow/nested-input": [submit_nested("lib-input", "parent-input"), approve()],
    "flow/precondition": [submit("precondition"), approve()],
    "flow/verify": [submit("verify"), approve()],
    "flow/fallback": [submit("fallback"), approve()],
    "flow/inherit": [submit("inherit"), approve()],
    "peek/nested-gone-at-approval": [
        submit_nested("lib-peek"),
        delete_lib,
        approve(),
        restore_lib,
        approve_if("failed"),
    ],
    "flow/nested-gone-at-approval": [
        submit_nested("lib-flow"),
        delete_lib,
        approve(),
        restore_lib,
        approve_if("failed"),
    ],
    "two": [submit("plain"), approve()],
}
BROKEN: dict[str, object] = {}
CONTROLS: dict[str, list[Step]] = {"flow/none": [submit("none"), approve()]}
SANITY: dict[str, list[Step]] = {
    "flow/direct": [submit("direct"), approve()],
    "two/x": [submit("plain"), approve()],
}
TWO: dict[str, list[Step]] = {"flow/direct-two": [submit("direct"), approve(), approve(BOB)]}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write_config(approval=RULES, tools=tools(lab))
    play(lab, ATTACKS | CONTROLS | SANITY | TWO)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r3-scope", _build)


def _ran(lab: Lab, vid: str) -> list[str]:
    tags = [vid] + [
        f"{vid}{s}" for s in ("-2", "-check", "-fb", "-fmt", "-lib", "-lib-1", "-lib-2")
    ]
    return [t for t in tags if lab.calls(t)]


@pytest.mark.parametrize("vid", list(CONTROLS) + list(TWO))
def test_controls_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", list(SANITY))
def test_the_rules_bite(lab: Lab, vid: str) -> None:
    assert _ran(lab, vid) == [] and not lab.started(vid), lab.codes(vid)
    assert "partial" in lab.codes(vid)


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_one_approval_never_runs_a_plan_its_rule_asks_two_for(lab: Lab, vid: str) -> None:
    assert _ran(lab, vid) == [], f"ran on Alice's approval alone: {_ran(lab, vid)} {lab.codes(vid)}"
    assert not lab.started(vid), lab.codes(vid)
    if "gone" not in vid:  # waits for a second approval, not merely invalid or stuck
        assert "more approvals needed" in lab.codes(vid), lab.codes(vid)
