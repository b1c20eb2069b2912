# ruff: noqa: E501  (plan text reads best on one line)
"""Round 7, who may make a plan run: a ``flows: untrusted_to_sensitive`` rule the plan's real
flows fit, however the reference is spelled, so the plan never gets by on one approval.

Config: a plan where outside data (the ``rec`` tool, untrusted by default) reaches ``send``'s
sensitive ``to`` needs two approvals. Only Alice approves each variant. Round 3 covered the
flow inside checks, fallbacks, one ``inherit`` hop and nested inputs; here the spelling and
route of the reference change:

- ``result``: ``to: "$<actions[1].result.json.echo.tag>"`` (the whole result, not an output)
- ``interp``: ``to: "x-$<actions[1].outputs.who>"`` (inside a longer string)
- ``list``: ``to: ["$<actions[1].outputs.who>"]`` (an item of a list)
- ``map``: ``to: {addr: "$<actions[1].outputs.who>"}`` (nested in a mapping)
- ``inherit2``: two ``inherit`` hops (``fmt`` then ``fmt``) before ``send``
- ``needs``: a graph plan (``needs: [1]``)
- ``legacy``: ``to: "${actions[1].outputs.who}"`` (the legacy form, rewritten at freeze)
- ``nested-out``: a pinned plan's output (its own action read outside data) read by the
  parent's ``send`` through the nested action's declared output
- ``nested-result``: the same through ``$<actions[2].result.outputs['1'].who>``

Defence: each is recorded ``partial`` (one of two), nothing of it runs. Controls: ``direct``
(the plain flow) waits too; ``none`` (a literal recipient) runs on Alice's approval.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_approval_authors import shared_lab

RULES = """\
rules:
  - match: {flows: untrusted_to_sensitive}
    require: [{count: 2}]
"""

HEAD = """\
plan:
  name: "{tag}"
  task: "round 7 flow variant {tag}"
  status: {status}
available_tools:
  - name: rec
  - name: send
  - name: fmt
actions:
  - id: 1
    tool: rec
    why: "read outside data"
    params: {{tag: "{tag}"}}
    outputs:
      - {{name: who, path: "$.json.echo.tag"}}
"""
G = '\n    guards: [{param: to, matches: "^.*$"}]\n'


def send(to: str, aid: int = 2, extra: str = "") -> str:
    return (
        f'  - id: {aid}\n    tool: send\n    why: "send"\n{extra}    params: {{tag: "@TAG@-send", to: {to}}}'
        + G
    )


WHO = '"$<actions[1].outputs.who>"'
BODIES = {
    "direct": send(WHO),
    "none": send('"ops@example.com"').replace(G, "\n"),
    "result": send('"$<actions[1].result.json.echo.tag>"'),
    "interp": send('"x-$<actions[1].outputs.who>"'),
    "list": send(f"[{WHO}]"),
    "map": send("{addr: " + WHO + "}"),
    "inherit2": '  - id: 2\n    tool: fmt\n    why: "f1"\n    params: {tag: "@TAG@-f1", v: '
    + WHO
    + '}\n    outputs:\n      - {name: v, path: "$.v"}\n'
    + '  - id: 3\n    tool: fmt\n    why: "f2"\n    params: {tag: "@TAG@-f2", w: "$<actions[2].outputs.v>"}\n    outputs:\n      - {name: w, path: "$.w"}\n'
    + send('"$<actions[3].outputs.w>"', 4),
    "needs": send(WHO, extra="    needs: [1]\n"),
    "legacy": send('"${actions[1].outputs.who}"'),
    "nested-out": '  - id: 2\n    plan: {path: plans/@LIB@, hash: "@PIN@"}\n    why: "run the library"\n    outputs:\n      - {name: who2, path: "$.outputs[\'1\'].who"}\n'
    + send('"$<actions[2].outputs.who2>"', 3),
    "nested-result": '  - id: 2\n    plan: {path: plans/@LIB@, hash: "@PIN@"}\n    why: "run the library"\n'
    + send("\"$<actions[2].result.outputs['1'].who>\"", 3),
}
ATTACKS = [
    "result",
    "interp",
    "list",
    "map",
    "inherit2",
    "needs",
    "legacy",
    "nested-out",
    "nested-result",
]
BROKEN: dict[str, object] = {}


def tools(lab: Lab) -> str:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    return (
        f"send: {{kind: exec, argv: {rec}, {env}, sensitive: [to]}}\n"
        "fmt: {kind: echo, output_trust: inherit}\n"
    )


def _text(
    vid: str, body: str, status: str = "pending_approval", lib: str = "", pin: str = ""
) -> str:
    return HEAD.format(tag=vid, status=status) + BODIES[body].replace("@TAG@", vid).replace(
        "@LIB@", lib
    ).replace("@PIN@", pin)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    lab.write_config(approval=RULES, tools=tools(lab))
    for vid in ["direct", "none", *ATTACKS]:
        if vid.startswith("nested"):
            lib = f"{vid}-lib"
            lab.write(lib, HEAD.format(tag=lib, status="draft"))
            pin = lab.cli("hash", str(lab.repo / "plans" / lib)).stdout.strip()
            assert pin.startswith("sha256:"), pin
            lab.write(vid, _text(vid, vid, lib=lib, pin=pin))
        else:
            lab.write(vid, _text(vid, vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid in ["direct", "none", *ATTACKS]:
        lab.approve(vid, ALICE, message=f"approve {vid}")
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r7-flows", _build)


def test_a_literal_recipient_runs_on_one_approval(lab: Lab) -> None:
    assert len(lab.calls("none")) == 1, lab.codes("none")


@pytest.mark.parametrize(
    "vid", ["direct", *[pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in ATTACKS]]
)
def test_outside_data_into_a_sensitive_param_needs_two(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert lab.plan(vid).get("approval", {}).get("status") == "partial", lab.codes(vid)
