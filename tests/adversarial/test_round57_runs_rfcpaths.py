# ruff: noqa: E501
"""Round 57 (runs): RFC 9535 corners in the queries that pick an output from a tool's answer.

docs/plan-format.md: outputs are "captured from the result with an RFC 9535 JSONPath query";
round 55 checked regexes and `==` at depth. Here the rest of the grammar where a reader that
is "almost" RFC 9535 picks another value (or accepts a query the RFC refuses, so the
reviewer and the engine read it differently): slices with negative and zero steps, the
existence test on a member that is ``false``/``null``, ``Nothing == Nothing``, ``&&``
binding tighter than ``||``, ``!``, ``length()`` counting Unicode scalar values, string
order by code point (not UTF-16 units), ``value()`` of several nodes, name selectors with
escapes and surrogate pairs, ``-0``, and queries the grammar refuses (leading zeros,
``-0`` as an index, an index past I-JSON's range, a non-singular query compared, a
function of the wrong type).

Lab ``q``: action 1 ``echo`` returns the variant's data; it declares one output with the
variant's query (``optional: true``); action 2 ``rec`` gets ``v`` = that output. Alice
approves; one pass.

Asserted, per variant: the value ``rec`` got is the RFC's (a non-singular query gives the
list of its matches), or (``NOTHING``) nothing matched and ``rec`` never ran
(``E_REF_UNAVAILABLE``), or (``INVALID``) the plan is invalid and never ran.

Result: every variant held (27): negative and zero slice steps, existence of a ``false``
or ``null`` member, ``Nothing == Nothing``, ``&&`` over ``||``, ``length()`` in scalar
values, code-point order, ``value()`` of two nodes, escaped names, ``-0``, ``count()``, a
filter under ``..`` all give the RFC's value; leading zeros, ``-0`` as an index, an index
past 2^53, a non-singular comparison, ``length()`` of a node list, a logical function
compared, a bare literal and ``$.a.1`` make the plan invalid.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

INVALID, NOTHING = "<invalid>", "<nothing>"
ITEMS = "{items: [{id: 1, flag: false}, {id: 2, flag: null}, {id: 3}]}"
# id: (echo params (YAML flow), query, what rec must get)
VARIANTS: dict[str, tuple[str, str, Any]] = {
    "slice-neg": ("{a: [1, 2, 3, 4]}", "$.a[::-1]", [4, 3, 2, 1]),
    "slice-neg-bounds": ("{a: [1, 2, 3, 4]}", "$.a[3:0:-2]", [4, 2]),
    "slice-neg-start": ("{a: [1, 2, 3, 4]}", "$.a[-2:]", [3, 4]),
    "slice-zero-step": ("{a: [1, 2, 3, 4]}", "$.a[::0]", NOTHING),
    "slice-huge": ("{a: [1, 2, 3, 4]}", "$.a[-9007199254740991:9007199254740991:2]", [1, 3]),
    "exists-false": (ITEMS, "$.items[?@.flag].id", [1, 2]),
    "not-exists": (ITEMS, "$.items[?!@.flag].id", [3]),
    "nothing-eq-nothing": (ITEMS, "$.items[?@.nope == @.nada].id", [1, 2, 3]),
    "null-vs-missing": (ITEMS, "$.items[?@.flag == null].id", [2]),
    "and-before-or": (
        "{a: [{x: 1, y: 0, z: 0}, {x: 0, y: 1, z: 0}, {x: 0, y: 1, z: 1}]}",
        "$.a[?@.x == 1 || @.y == 1 && @.z == 1].x",
        [1, 0],
    ),
    "length-scalars": (
        '{a: [{s: "\\U0001F600", k: 1}, {s: "ab", k: 2}]}',
        "$.a[?length(@.s) == 1].k",
        [1],
    ),
    "order-codepoint": (
        '{a: [{s: "\\uFFFF", k: 1}, {s: "\\U0001F600", k: 2}]}',
        '$.a[?@.s < "\\uD83D\\uDE00"].k',
        [1],
    ),
    "value-many": ("{a: [{b: [1, 1]}, {b: [1]}]}", "$.a[?value(@.b[*]) == 1].b", [[1]]),
    "name-escape": ('{"a\'b": 7}', "$['a\\'b']", 7),
    "name-unicode-escape": ('{"\\U0001F600": 8}', "$['\\uD83D\\uDE00']", 8),
    "minus-zero": ("{a: [{n: 0, k: 1}, {n: 1, k: 2}]}", "$.a[?@.n == -0].k", [1]),
    "count": ("{a: [{b: [1, 2]}, {b: [1]}]}", "$.a[?count(@.b[*]) == 2].b", [[1, 2]]),
    "desc-filter": ("{a: {b: {c: 5}, d: [{c: 6}]}}", "$..[?@.c > 5].c", [6]),
    "leading-zero": ("{a: [1, 2]}", "$.a[01]", INVALID),
    "minus-zero-index": ("{a: [1, 2]}", "$.a[-0]", INVALID),
    "index-past-ijson": ("{a: [1, 2]}", "$.a[9007199254740992]", INVALID),
    "nonsingular-compare": ("{a: [{b: [1]}]}", "$.a[?@.b[*] == 1]", INVALID),
    "length-nodelist": ("{a: [{b: [1]}]}", "$.a[?length(@.*) == 1]", INVALID),
    "match-as-value": ("{a: [{s: ab}]}", "$.a[?match(@.s, 'ab') == true]", INVALID),
    "bare-literal": ("{a: [1]}", "$.a[?true]", INVALID),
    "dot-number": ("{a: {'1': 5}}", "$.a.1", INVALID),
    "control": ("{a: [1, 2]}", "$.a[1]", 2),
}
IDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}


def _plan(vid: str) -> str:
    data, query, _ = VARIANTS[vid]
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: echo}, {name: rec}]\nactions:\n"
        f"  - id: 1\n    tool: echo\n    why: w\n    params: {data}\n"
        f"    outputs: [{{name: v, path: {json.dumps(query)}, optional: true}}]\n"
        f'  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {vid}, v: "$<actions[1].outputs.v>"}}\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root / "q")
    for vid in IDS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in IDS:
        if lab.plan(vid)["plan"]["status"] == "pending_approval":
            lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r57-rfcpaths", _build)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_the_rfc_value(lab: Lab, vid: str) -> None:
    expected = VARIANTS[vid][2]
    calls = lab.calls(vid)
    plan = lab.plan(vid)
    said = json.dumps({k: plan.get(k) for k in ("plan", "validation", "execution")}, default=str)
    if expected == INVALID:
        assert calls == [], f"rec ran with {calls[0]['stdin']}"
        assert plan["plan"]["status"] == "invalid", said[:800]
        return
    if expected == NOTHING:
        assert calls == [], f"rec ran with {calls[0]['stdin']}"
        assert "E_REF_UNAVAILABLE" in said, said[:800]
        return
    assert len(calls) == 1, said[:800]
    assert json.loads(calls[0]["stdin"])["v"] == expected, calls
