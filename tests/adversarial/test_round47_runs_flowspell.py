# ruff: noqa: E501
"""Round 47, exactly the approved values: outside data reaching a ``sensitive`` param through
a reference SPELLING the flow analysis and the resolver might read differently (escapes,
blanks, quoted names, the legacy ``${...}`` form outside an action's own params).

Lab ``fs`` (local mode): ``emit`` (exec, untrusted by default) prints ``{"v":
"attacker@evil.example.net"}``; ``mail`` (exec, the recorder, ``sensitive: [to]``) and the
check tool ``chk`` (the recorder, ``idempotent: true``, ``risk: low``, ``sensitive: [to]``,
printing ``{"ok": true}``). Each plan: action 1 ``emit`` with output ``v`` (``$.json.v``),
action 2 ``mail`` whose ``to`` (or a check's / fallback step's / nested input's ``to``) is
spelled as below, with NO guard. Alice approves all; two passes. Variants (``R`` =
``actions[1].outputs.v``):

- ``control``: ``to: "$<R>"`` (must be E_UNGUARDED_FLOW; the bench's proof).
- ``esc3``: ``"$$$<R>"``; ``esc4``: ``"$$$$<R>"``; ``esc-then-ref``: ``"$$<$<R>>"``;
  ``esc-mid``: ``"x$$<y $<R>"``.
- ``spaced``: ``"$< R >"``; ``quoted``: ``"$<actions[1].outputs['v']>"``;
  ``dquoted``: ``'$<actions[1].outputs["v"]>'``; ``result``: ``"$<actions[1].result.json.v>"``;
  ``result-whole``: ``"$<actions[1].result>"``.
- ``legacy``: ``"${R}"``; ``legacy-text``: ``"to ${R}"``; ``legacy-nested-map``: ``to: {a:
  "${R}"}``.
- ``legacy-pre``: an action-2 precondition ``chk`` with ``to: "${R}"``.
- ``legacy-verify``: action 2's ``verify: {tool: chk, params: {to: "${R}"}}``.
- ``legacy-fallback``: action 2 (``mail`` to a literal address, ``exit`` param making it fail)
  ... kept simple: a fallback step ``mail`` with ``to: "${R}"`` after ``fail`` fails.
- ``legacy-input``: a nested draft ``plans/child`` (``mail`` with ``to: "$<inputs.to>"``) and
  the parent's ``inputs: {to: "${R}"}``.

Asserted for each: the attacker's address never reaches ``mail`` or ``chk`` (as the
``to`` value, inside it, or in argv). It may reach them as the literal reference text, or
the plan may be refused (E_UNGUARDED_FLOW/E_REF_*): both held.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

EVIL = "attacker@evil.example.net"
EMIT = 'import sys\nsys.stdin.read()\nprint(\'{"v": "attacker@evil.example.net"}\')\n'
FAIL = "import sys\nsys.stdin.read()\nsys.exit(3)\n"
R = "actions[1].outputs.v"

HEAD = """\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: emit}}, {{name: mail}}, {{name: chk}}, {{name: fail}}]
actions:
  - id: 1
    tool: emit
    why: read an email
    params: {{x: 1}}
    outputs: [{{name: v, path: $.json.v}}]
"""


def _mail(tag: str, to: str, extra: str = "") -> str:
    return (
        f"  - id: 2\n    tool: mail\n    why: reply\n    params: {{tag: {tag}, to: {to}}}\n" + extra
    )


def _plans() -> dict[str, str]:
    q = json.dumps
    p: dict[str, str] = {}
    simple = {
        "control": f"$<{R}>",
        "esc3": f"$$$<{R}>",
        "esc4": f"$$$$<{R}>",
        "esc-then-ref": f"$$<$<{R}>>",
        "esc-mid": f"x$$<y $<{R}>",
        "spaced": f"$< {R} >",
        "quoted": "$<actions[1].outputs['v']>",
        "dquoted": '$<actions[1].outputs["v"]>',
        "result": "$<actions[1].result.json.v>",
        "result-whole": "$<actions[1].result>",
        "legacy": "${" + R + "}",
        "legacy-text": "to ${" + R + "}",
    }
    for tag, to in simple.items():
        p[tag] = HEAD.format(tag=tag) + _mail(tag, q(to))
    leg = q("${" + R + "}")
    p["legacy-nested-map"] = HEAD.format(tag="legacy-nested-map") + _mail(
        "legacy-nested-map", "{a: " + leg + "}"
    )
    p["legacy-pre"] = HEAD.format(tag="legacy-pre") + _mail(
        "legacy-pre",
        q("ok@example.com"),
        f"    preconditions:\n      - {{tool: chk, params: {{tag: legacy-pre-chk, to: {leg}}}, expect: {{path: $.json.ok, equals: true}}}}\n",
    )
    p["legacy-verify"] = HEAD.format(tag="legacy-verify") + _mail(
        "legacy-verify",
        q("ok@example.com"),
        f"    verify: {{tool: chk, params: {{tag: legacy-verify-chk, to: {leg}}}, expect: [{{path: $.json.ok, equals: true}}], timeout: 2, interval: 1}}\n",
    )
    p["legacy-fallback"] = HEAD.format(tag="legacy-fallback") + (
        "  - id: 2\n    tool: fail\n    why: fails\n    params: {y: 1}\n"
        "    on_failure: fallback\n"
        f"    fallback:\n      - {{id: '2.1', tool: mail, why: tell, params: {{tag: legacy-fallback, to: {leg}}}}}\n"
    )
    return p


CHILD = """\
plan:
  name: child
  task: nested
  status: draft
inputs:
  to: "nobody@example.com"
available_tools: [{name: mail}]
actions:
  - id: 1
    tool: mail
    why: child mail
    params: {tag: legacy-input, to: "$<inputs.to>"}
"""


def _build(root: Path) -> Lab:
    for name, text in {"emit.py": EMIT, "fail.py": FAIL}.items():
        (root / name).write_text(text)
    py = json.dumps(sys.executable)
    lab = Lab(root / "fs")
    rec = json.dumps(str(lab.recorder))
    log = json.dumps(str(lab.log))
    tools = (
        f"emit: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'emit.py'))}]}}\n"
        f"fail: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'fail.py'))}]}}\n"
        f"mail: {{kind: exec, argv: [{py}, {rec}, '{{tag}}'], env: {{REC_LOG: {log}}}, sensitive: [to]}}\n"
        f"chk: {{kind: exec, argv: [{py}, {rec}, '{{tag}}'], env: {{REC_LOG: {log}}}, sensitive: [to], idempotent: true, risk: low}}\n"
    )
    lab.write_config(tools=tools)
    plans = _plans()
    for tag, text in plans.items():
        lab.write(tag, text)
    lab.write("child", CHILD)
    lab.commit("plans")
    child_hash = lab.cli("hash", str(lab.repo / "plans" / "child")).stdout.strip().split()[-1]
    lab.write(
        "legacy-input",
        HEAD.format(tag="legacy-input")
        + "  - id: 2\n    plan: {path: plans/child, hash: "
        + json.dumps(child_hash)
        + "}\n    why: nested\n    inputs: {to: "
        + json.dumps("${" + R + "}")
        + "}\n",
    )
    lab.commit("nested")
    lab.run()
    for tag in [*plans, "legacy-input"]:
        lab.set_status(tag, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.run()
    lab.tags = [*plans, "legacy-input"]  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r47-flowspell", _build)


VIDS = [*_plans(), "legacy-input"]


@pytest.mark.parametrize("vid", VIDS)
def test_outside_data_never_reaches_a_sensitive_param_unguarded(lab: Lab, vid: str) -> None:
    rows = (
        [
            r
            for r in (json.loads(x) for x in lab.log.read_text().splitlines() if x.strip())
            if r["argv"][0].startswith(vid)
        ]
        if lab.log.exists()
        else []
    )
    assert EVIL not in json.dumps(rows), f"{vid}: {rows!r}\n{lab.codes(vid)[:800]}"


def test_the_bench_control_was_refused(lab: Lab) -> None:
    assert "E_UNGUARDED_FLOW" in lab.codes("control")
