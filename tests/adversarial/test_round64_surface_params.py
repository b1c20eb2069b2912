"""Round 64, agent-facing surfaces: round 63's params rule ("one params check for every tool
call against the catalog's ``params_schema``, references allowed at any depth, ``$$<``
literal text; ``schema --config`` and ``validate --config`` agree") where it was not tried:
a catalog ``params_schema`` that uses JSON Schema's own references (``$ref`` into its
``$defs``, a recursive tree, a ``$defs`` name that is also one of the plan schema's), and
the check made after resolution, just before a tool runs, for every kind of tool call (an
action, a fallback step, a precondition, a verify, a nested plan's action).

Part 1, no lab: a config whose tool ``rec`` has a ``params_schema`` with ``$defs`` (``port``
an integer 1..65535, ``opts`` an object, ``node`` a recursive tree, ``Output`` an integer:
a name the plan schema uses for its own outputs); ``plangate schema --config`` once,
``plangate validate --json --config`` once over all plans; the schema applied with
``jsonschema`` (an editor). Asserted: an honest plan ``validate`` accepts is accepted by the
``--config`` schema (``defs-*``), and a plan the schema accepts ``validate`` refuses only
as the schema does too (``collide-slip``).

Part 2, one lab: an ``echo`` action hands back ``notint`` (or ``2``), and a later tool call
reads it as an integer param of the catalog tool ``recn``/``chk``: ``rt-action`` (an
action, the control), ``rt-deep`` (inside an object param), ``rt-fallback`` (a fallback
step), ``rt-verify`` (a verify's check tool), ``rt-precond`` (a precondition's check tool),
``rt-nested`` (a pinned nested plan's action, its input given by reference), ``rt-text``
(``"1$<...>"``: the text ``12`` for an integer). Asserted: the tool is never called with
the value (``E_PARAMS_INVALID`` before the call); ``rt-ok`` (the value ``7``) is called.

Broke (fixed below): ``defs-ref-ok``, ``defs-nested-ref``, ``defs-tree-ok``,
``defs-tree-ref``, ``defs-bad-port``: ``schema --config`` embeds the catalog schema in the
plan schema as it
is, so its ``$ref: "#/$defs/port"`` points into the PLAN schema's ``$defs``: jsonschema
fails ("PointerToNowhere: '/$defs/port' does not exist") on every plan naming ``rec`` (an
editor cannot check an honest plan at all); ``collide-honest``: ``$ref: "#/$defs/Output"``
resolves to the plan schema's own ``Output`` (an object), so ``n: 5``, which ``validate``
accepts, is refused by the schema, and ``collide-slip``: ``n: {name: o, path: "$.x"}``
(refused by ``validate``, E_PARAMS_INVALID) is accepted by the schema. Should: resolve (or
rebase: ``$defs`` moved, ``$ref`` rewritten) the catalog schema's own references before it
is embedded. Held: see the ``rt-*`` ids (every call checked after resolution).

Fixed (2026-11-29): all 7. ``schema --config`` puts each catalog tool's params schema
(``with_references``) at the plan schema's ``$defs/tool.<name>`` and each call's ``params``
is a ``$ref`` to it; the tool schema's own references are rebased on the way
(``catalog._rebased``): every ``$ref``/``$dynamicRef`` into its root (``#``, ``#/$defs/...``,
``#/definitions/...``, any pointer) is prefixed with ``#/$defs/tool.<name>``, every anchor
named ``tool.<name>.<anchor>``; a schema with its own ``$id`` is its own resource and kept.
So ``#`` means the tool schema, as when ``validate`` checks params against it alone:
recursive trees resolve, and ``Output`` is the tool's, never the plan's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from schemakit import catalog_config, judged
from test_round2_execution_kit import shared

#: the catalog tool ``rec``'s ``params_schema``
PARAMS_SCHEMA = """\
type: object
$defs:
  port: {type: integer, minimum: 1, maximum: 65535}
  opts: {type: object, properties: {n: {type: integer}}, additionalProperties: false}
  node:
    type: object
    properties:
      name: {type: string}
      kids: {type: array, items: {$ref: "#/$defs/node"}}
    additionalProperties: false
  Output: {type: integer}
properties:
  tag: {type: string}
  port: {$ref: "#/$defs/port"}
  opts: {$ref: "#/$defs/opts"}
  tree: {$ref: "#/$defs/node"}
  n: {$ref: "#/$defs/Output"}
additionalProperties: false
"""

B = """\
plan:
  name: "n"
  task: "t"
  status: pending_approval
inputs: {n: 5, who: a}
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "w"
    params:
      tag: "x"
"""

#: plans validate --config accepts (asserted) which the --config schema must accept
HONEST = {
    "defs-ref-ok": B + "      port: 8080\n",
    "defs-nested-ref": B + '      opts: {n: "$<inputs.n>"}\n',
    "defs-tree-ok": B + "      tree: {name: r, kids: [{name: k, kids: []}]}\n",
    "defs-tree-ref": B + '      tree: {name: r, kids: [{name: "$<inputs.who>"}]}\n',
    "collide-honest": B + "      n: 5\n",
}
#: plans validate --config refuses (asserted E_PARAMS_INVALID) which the schema must refuse
SLIPS = {
    "collide-slip": B + '      n: {name: o, path: "$.x"}\n',
    "defs-bad-port": B + "      port: 0\n",
}

#: all fixed (see the module docstring)
BROKEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("r64-params")
    return judged(folder, {**HONEST, **SLIPS}, catalog_config(folder, PARAMS_SCHEMA))


@pytest.mark.parametrize("vid", cases(list(HONEST), list(HONEST), BROKEN))
def test_an_honest_plan_is_accepted_by_the_config_schema(
    verdicts: dict[str, Any], vid: str
) -> None:
    got = verdicts[vid]
    assert got["validate"] is not None and got["validate"]["valid"], got
    assert got["schema"] == [], got


@pytest.mark.parametrize("vid", cases(list(SLIPS), list(SLIPS), BROKEN))
def test_a_plan_validate_refuses_is_refused_by_the_schema(
    verdicts: dict[str, Any], vid: str
) -> None:
    got = verdicts[vid]
    row = got["validate"]
    assert row is not None and row["valid"] is False, got
    assert any(e["code"] == "E_PARAMS_INVALID" for e in row["errors"]), row
    assert got["schema"], got
    assert not any(e.startswith("UNCHECKABLE") for e in got["schema"]), got


# -- part 2: the check after resolution, for every kind of tool call -----------------------

ECHO = """\
  - id: 1
    tool: echo
    why: "hand back a value"
    params: {{v: {v}, d: 2}}
    outputs: [{{name: o, path: "$.v"}}, {{name: d, path: "$.d"}}]
"""
HEAD = """\
plan:
  name: "{slug}"
  task: "t"
  status: pending_approval
available_tools: [{{name: echo}}, {{name: recn}}, {{name: chk}}, {{name: fail}}]
actions:
"""
CHECK = (
    '{tool: chk, params: {tag: "%s", n: "$<actions[1].outputs.o>"},'
    ' expect: [{path: "$.json.ok", equals: true}]'
)

RUNTIME = {
    "rt-ok": (
        "7",
        '  - {id: 2, tool: recn, why: w, params: {tag: rt-ok, n: "$<actions[1].outputs.o>"}}\n',
    ),
    "rt-action": (
        "notint",
        '  - {id: 2, tool: recn, why: w, params: {tag: rt-action, n: "$<actions[1].outputs.o>"}}\n',
    ),
    "rt-deep": (
        "notint",
        "  - {id: 2, tool: recn, why: w,"
        ' params: {tag: rt-deep, opts: {n: "$<actions[1].outputs.o>"}}}\n',
    ),
    "rt-text": (
        "notint",
        '  - {id: 2, tool: recn, why: w, params: {tag: rt-text, n: "1$<actions[1].outputs.d>"}}\n',
    ),
    "rt-fallback": (
        "notint",
        "  - id: 2\n    tool: fail\n    why: w\n    on_failure: fallback\n    fallback:\n"
        '      - {id: "2.1", tool: recn, why: fb,'
        ' params: {tag: rt-fallback, n: "$<actions[1].outputs.o>"}}\n',
    ),
    "rt-verify": (
        "notint",
        "  - id: 2\n    tool: recn\n    why: w\n    params: {tag: rt-verify-act, n: 1}\n"
        f"    verify: {CHECK % 'rt-verify'}, timeout: 2, interval: 1}}\n",
    ),
    "rt-precond": (
        "notint",
        "  - id: 2\n    tool: recn\n    why: w\n    params: {tag: rt-precond-act, n: 1}\n"
        f"    preconditions: [{CHECK % 'rt-precond'}}}]\n",
    ),
    "rt-nested": (
        "notint",
        '  - id: 2\n    plan: {path: plans/lib64, hash: "HASH"}\n    why: w\n'
        '    inputs: {n: "$<actions[1].outputs.o>"}\n',
    ),
}
LIB = """\
plan:
  name: "lib64"
  task: "a library"
  status: pending_approval
inputs: {n: 1}
available_tools: [{name: recn}]
actions:
  - {id: 1, tool: recn, why: w, params: {tag: rt-nested, n: "$<inputs.n>"}}
"""


def _tools(root: Path) -> str:
    py = json.dumps(sys.executable)
    rec = json.dumps(str(root / "rec.py"))
    schema = (
        "{type: object, properties: {tag: {type: string}, n: {type: integer},"
        " opts: {type: object, properties: {n: {type: integer}}}}, required: [tag]}"
    )
    return (
        f"recn: {{kind: exec, argv: [{py}, {rec}, '{{tag}}'], params_schema: {schema}}}\n"
        f"chk: {{kind: exec, argv: [{py}, {rec}, '{{tag}}'], idempotent: true, risk: low,"
        f" params_schema: {schema}}}\n"
        "fail: {kind: exec, argv: [/bin/false]}\n"
    )


def _build(root: Path) -> Lab:
    lab = Lab(root, tools=_tools(root))
    lab.git_date = "@1795100000 +0000"
    lab.write("lib64", LIB)
    lab.commit("library")
    lab.run()
    digest = lab.cli("hash", "plans/lib64", cwd=lab.repo).stdout.strip().split()[0]
    for vid, (value, action) in RUNTIME.items():
        text = HEAD.format(slug=vid) + ECHO.format(v=value) + action.replace("HASH", digest)
        lab.write(vid, text)
    lab.commit("runtime plans")
    lab.run()
    for vid in RUNTIME:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.run()
    lab.got = {  # type: ignore[attr-defined]
        vid: {
            "calls": [c["stdin"] for c in lab.calls(vid)],
            "codes": lab.codes(vid),
            "started": lab.started(vid),
        }
        for vid in RUNTIME
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r64-surface-params", _build)


RT_BROKEN: dict[str, Any] = {}
RT_IDS = [v for v in RUNTIME if v != "rt-ok"]


def test_the_control_runs_with_its_resolved_value(lab: Lab) -> None:
    got = lab.got["rt-ok"]  # type: ignore[attr-defined]
    assert [json.loads(c)["n"] for c in got["calls"]] == [7], got


@pytest.mark.parametrize("vid", cases(RT_IDS, RT_IDS, RT_BROKEN))
def test_no_tool_gets_a_resolved_value_its_schema_refuses(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["started"], f"the plan never started, the attack is void: {got['codes'][:1500]}"
    assert got["calls"] == [], f"the tool was called with a value its schema refuses: {got}"
    assert "E_PARAMS_INVALID" in got["codes"], got["codes"][:2000]
