# ruff: noqa: E501
"""Round 53 (runs): reference text that reaches a nested plan as data. docs/plan-format.md:
"a resolved value is data and is never scanned again, so a tool's output can fill a
parameter but can never become a reference". A nested plan resolves twice: the parent
resolves the action's ``inputs``, then the nested plan resolves ``$<inputs.K>`` in its own
params, checks and fallbacks. Nobody sent reference *text* through that second resolution.

Lab ``nr`` (a secrets file with ``TOK``). The pinned child ``plans/child`` (``draft``) takes
input ``text`` and calls ``rec`` with ``whole: $<inputs.text>`` and ``emb:
x-$<inputs.text>-y``; its action has a precondition on ``chk`` (idempotent, low risk) with
``q: $<inputs.text>``, a ``verify`` tool ``chk`` with the same param, and a fallback (never
needed). The parent ``plans/par``:

- action 1 ``rec`` with ``v: "$$<secrets.TOK>"``, ``a: "$$<approval.by>"``, ``l:
  "$$<inputs.text>"`` (literal text, ``$$<`` escaped, so the tool echoes ``$<inputs.text>``:
  the child's own input name; it was ``$${inputs.text}``, which the freeze rewrote to this,
  until round 114 refused ``$${``), outputs ``v``, ``a``, ``l`` (the text
  the tool echoes back: tool output holding reference text);
- actions 2, 3, 4: the child with ``inputs: {text: $<actions[1].outputs.v|a|l>}``;
- action 5: the child with ``inputs: {text: "$$<secrets.TOK>"}`` (the parent's own escape,
  resolved once into reference text).

Alice approves; one pass. Asserted per variant (``out-secret``, ``out-approval``,
``out-legacy``, ``escape-secret``): each child call (action, precondition, verify) got the
reference text literally, never the secret's value nor Alice's address; the secret is in no
call and nowhere in history. All held.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import Lab
from test_round2_execution_kit import shared

S = "Zq8Wxx3Yv7Ut2"
CHILD = """plan:
  name: child
  task: t
  status: draft
inputs:
  text: none
available_tools: [{name: rec}, {name: chk}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: child, whole: "$<inputs.text>", emb: "x-$<inputs.text>-y"}
    preconditions:
      - {tool: chk, params: {tag: pre, q: "$<inputs.text>"}, expect: {path: $.json.ok, equals: true}}
    verify:
      tool: chk
      params: {tag: ver, q: "$<inputs.text>"}
      expect: {path: $.json.ok, equals: true}
      timeout: 5
      interval: 1
    on_failure: fallback
    fallback:
      - {id: "1.1", tool: rec, why: w, params: {tag: fb, q: "$<inputs.text>"}}
"""
VARIANTS = {"out-secret": 2, "out-approval": 3, "out-legacy": 4, "escape-secret": 5}
LITERAL = {
    "out-secret": "$<secrets.TOK>",
    "out-approval": "$<approval.by>",
    "out-legacy": "$<inputs.text>",
    "escape-secret": "$<secrets.TOK>",
}


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {S}\n")
    lab = Lab(root / "nr", extra=f"secrets: {{file: {root / 'sec.yml'}}}\n")
    lab.write_config(
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=f"chk: {{kind: exec, argv: {json.dumps([__import__('sys').executable, str(lab.recorder), '{tag}'])}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}, idempotent: true, risk: low, output_trust: trusted}}\n",
    )
    lab.write("child", CHILD)
    lab.commit("child")
    pin = lab.cli("hash", str(lab.repo / "plans" / "child")).stdout.strip()
    assert pin.startswith("sha256:"), pin
    nested = "".join(
        f'  - id: {n}\n    plan: {{path: plans/child, hash: "{pin}"}}\n    why: w\n    inputs: {{text: {ref}}}\n'
        for n, ref in [
            (2, '"$<actions[1].outputs.v>"'),
            (3, '"$<actions[1].outputs.a>"'),
            (4, '"$<actions[1].outputs.l>"'),
            (5, '"$$<secrets.TOK>"'),
        ]
    )
    lab.write(
        "par",
        "plan:\n  name: par\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}]\nactions:\n"
        '  - id: 1\n    tool: rec\n    why: w\n    params: {tag: p1, v: "$$<secrets.TOK>", a: "$$<approval.by>", l: "$$<inputs.text>"}\n'
        "    outputs: [{name: v, path: $.json.echo.v}, {name: a, path: $.json.echo.a}, {name: l, path: $.json.echo.l}]\n"
        + nested,
    )
    lab.commit("parent")
    lab.run()
    lab.approve("par")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r53-nestrescan", _build)


def _child_calls(lab: Lab, tag: str) -> list[dict[str, object]]:
    return [json.loads(c["stdin"]) for c in lab.calls(tag)]


def test_the_parent_completed(lab: Lab) -> None:
    assert lab.plan("par")["plan"]["status"] == "completed", lab.plan("par").get("execution")


@pytest.mark.parametrize("vid", list(VARIANTS))
def test_reference_text_reaches_the_child_as_text(lab: Lab, vid: str) -> None:
    index = list(VARIANTS).index(vid)
    literal = LITERAL[vid]
    child = _child_calls(lab, "child")
    assert len(child) == len(VARIANTS), child
    assert child[index]["whole"] == literal and child[index]["emb"] == f"x-{literal}-y", child[
        index
    ]
    for tag in ("pre", "ver"):
        calls = _child_calls(lab, tag)
        assert calls[index]["q"] == literal, calls
    text = lab.log.read_text()
    assert S not in text and "alice@example.com" not in text


def test_the_secret_is_nowhere_in_history(lab: Lab) -> None:
    assert S not in lab.git("log", "-p", "--all")
    assert _child_calls(lab, "fb") == []
