# ruff: noqa: E501
"""Round 55 (runs): the legacy ``${...}`` form outside an action's own ``params``.
docs/plan-format.md: "``${actions[1].outputs.x}``, ``${inputs.x}``, ``${plan.x}`` and
``${approval.x}`` ... in action ``params`` are rewritten to ``$<...>`` when the plan is
frozen ... Outside ``params`` (inputs, names, ``why``) ``${...}`` is plain text and reaches
tools exactly as written. Any other ``${...}`` is left alone." docs/architecture.md: "the
file, ``plangate hash`` and the frozen hash always agree". So what a tool gets must be what
the frozen (approved) file says at that place: a ``$<...>`` there is resolved, a ``${...}``
there reaches the tool as text.

Lab ``lr`` (input ``k: KVAL``, a secret ``TOK``). One plan per variant, the legacy text in:
``act`` (an action param: the control), ``act-emb`` (inside a longer string), ``fallback``
(a fallback step's params), ``pre`` (a precondition's params), ``verify`` (a verify tool's
params), ``nested-in`` (a nested action's ``inputs``), ``child`` (a pinned ``draft`` child's
own action params: the child is never frozen, the pin hashes it as written), ``secret``
(``${secrets.TOK}``: not a legacy name), ``shell`` (``${HOME}``), ``spaced``
(``${ inputs.k }``), ``approval`` (``${approval.approved_by}``).

Asserted per variant: the value the tool got equals the frozen file's text at that place
resolved once (``$<inputs.k>`` -> ``KVAL``; ``${...}`` -> itself), and the secret's value
reached no tool through a ``${...}``; for ``child`` (whose file keeps ``${inputs.text}``),
the value is resolved and ``plangate show`` of the parent marks it as the reference
``«$<inputs.text>»``.

Result: all held. The freeze rewrites action params only (``act``, ``act-emb``,
``approval``); fallback, precondition and verify params and a nested action's ``inputs``
keep ``${inputs.k}`` in the frozen file, ``show`` prints it as text, and the tool gets the
text; ``${secrets.TOK}``, ``${HOME}`` reach the tool as written. ``${ inputs.k }`` did too
until round 113 (``legacy-ref-spaced-opener``): a reviewer reads it as a reference, so it is
refused ``E_REF_INVALID`` now and never runs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

S = "Kw7Tq2Zr9Lm4Xv"
CHILD = """plan:
  name: child
  task: t
  status: draft
inputs:
  text: none
available_tools: [{name: rec}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: child-run, v: "${inputs.text}", w: "$<inputs.text>"}
"""
HEAD = "plan:\n  name: {n}\n  task: t\n  status: pending_approval\ninputs: {{k: KVAL}}\navailable_tools: [{{name: rec}}, {{name: frec}}, {{name: chk}}]\nactions:\n"


def _act(body: str) -> str:
    return f"  - id: 1\n    tool: rec\n    why: w\n{body}"


PLANS: dict[str, str] = {
    "act": _act('    params: {tag: act, v: "${inputs.k}"}\n'),
    "act-emb": _act('    params: {tag: act-emb, v: "x-${inputs.k}-y"}\n'),
    "fallback": '  - id: 1\n    tool: frec\n    why: w\n    params: {tag: fallback-f}\n    on_failure: fallback\n    fallback:\n      - {id: "1.1", tool: rec, why: w, params: {tag: fallback, v: "${inputs.k}"}}\n',
    "pre": _act(
        '    params: {tag: pre-a}\n    preconditions:\n      - {tool: chk, params: {tag: pre, v: "${inputs.k}"}, expect: {path: $.json.ok, equals: true}}\n'
    ),
    "verify": _act(
        '    params: {tag: verify-a}\n    verify: {tool: chk, params: {tag: verify, v: "${inputs.k}"}, expect: {path: $.json.ok, equals: true}, timeout: 2, interval: 1}\n'
    ),
    "secret": _act('    params: {tag: secret, v: "${secrets.TOK}"}\n'),
    "shell": _act('    params: {tag: shell, v: "${HOME}"}\n'),
    "spaced": _act('    params: {tag: spaced, v: "${ inputs.k }"}\n'),
    "approval": _act('    params: {tag: approval, v: "${approval.approved_by}"}\n'),
}
VIDS = [*PLANS, "nested-in", "child"]
BROKEN: dict[str, Any] = {}

FAIL = """\
import json, os, sys
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": sys.stdin.read()}) + "\\n")
sys.exit(1)
"""


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {S}\n")
    (root / "fail.py").write_text(FAIL)
    lab = Lab(root / "lr")
    log = json.dumps(str(lab.log))
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    fail = json.dumps([sys.executable, str(root / "fail.py"), "{tag}"])
    lab.write_config(
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=f"chk: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}, idempotent: true, risk: low, output_trust: trusted}}\n"
        f"frec: {{kind: exec, argv: {fail}, env: {{REC_LOG: {log}}}}}\n",
    )
    lab.write("child", CHILD)
    lab.commit("child")
    pin = lab.cli("hash", str(lab.repo / "plans" / "child")).stdout.split()[0]
    for vid, body in PLANS.items():
        lab.write(vid, HEAD.format(n=vid) + body)
    lab.write(
        "nested-in",
        HEAD.format(n="nested-in")
        + f'  - id: 1\n    plan: {{path: plans/child, hash: "{pin}"}}\n    why: w\n    inputs: {{text: "${{inputs.k}}"}}\n',
    )
    lab.write(
        "child-par",
        HEAD.format(n="child-par")
        + f'  - id: 1\n    plan: {{path: plans/child, hash: "{pin}"}}\n    why: w\n    inputs: {{text: "literal"}}\n',
    )
    lab.commit("plans")
    lab.run()
    for vid in [*PLANS, "nested-in", "child-par"]:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.shown = {  # type: ignore[attr-defined]
        v: lab.cli("show", str(lab.repo / "plans" / v), "--config", str(lab.config)).stdout
        for v in ("nested-in", "child-par")
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-legacyrefs", _build)


def _resolve_once(text: str) -> str:
    return re.sub(
        r"\$<inputs\.(k|text)>", lambda m: {"k": "KVAL", "text": "literal"}[m.group(1)], text
    )


def _got(lab: Lab, tag: str) -> Any:
    calls = lab.calls(tag)
    assert calls, f"{tag} never ran: {lab.codes(tag.split('-')[0])[:800]}"
    return json.loads(calls[0]["stdin"]).get("v")


LOC = {
    "fallback": lambda a: a["fallback"][0]["params"]["v"],
    "pre": lambda a: a["preconditions"][0]["params"]["v"],
    "verify": lambda a: a["verify"]["params"]["v"],
    "nested-in": lambda a: a["inputs"]["text"],
}


def _written(lab: Lab, vid: str) -> str:
    action = lab.plan(vid)["actions"][0]
    return str(LOC.get(vid, lambda a: a["params"]["v"])(action))


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_tool_gets_what_the_frozen_file_says(lab: Lab, vid: str) -> None:
    if vid == "child":
        got = [json.loads(c["stdin"]) for c in lab.calls("child-run")]
        assert got, "the child never ran"
        row = next(r for r in got if r["w"] == "literal")
        # the child is never frozen: its ${inputs.text} stays in the pinned file, and the
        # reviewer's `show` marks it as the reference it is run as
        assert 'param v = "\u00ab$<inputs.text>\u00bb"' in lab.shown["child-par"], lab.shown  # type: ignore[attr-defined]
        assert row["v"] == "literal", row
        return
    if vid == "spaced":  # round 113: a reviewer reads it as a reference: refused, never run
        assert not lab.calls("spaced"), lab.calls("spaced")
        assert "E_REF_INVALID" in lab.codes("spaced"), lab.codes("spaced")[:800]
        return
    written = _written(lab, vid)
    if vid == "nested-in":
        expected = _resolve_once(written)
        got = [json.loads(c["stdin"]) for c in lab.calls("child-run")]
        assert any(r["w"] == expected for r in got), (written, got)
        return
    got = _got(lab, vid)
    expected = _resolve_once(written).replace("$<approval.by>", "alice@example.com")
    assert got == expected, f"frozen file says {written!r}, the tool got {got!r}"
    assert S not in json.dumps(got)
