"""Round 59 (runs): RFC 9535 semantics of the output queries that fill a later action's params.

The attack: a tool's answer is outside data; the plan's declared output query (an RFC 9535
JSONPath, docs/plan-format.md "Fields", `outputs[]`) picks what of it fills action 2's
params. The reviewer reads the query by the RFC. Where the engine's reading differs (Python
truthiness for an existence test, a missing member taken as ``null``, ``Nothing`` compared,
negative steps, Unicode lengths, escaped member names), the tool gets another value than the
approved query selects, chosen by whoever wrote the answer.

Lab ``jp`` (local mode, shared by ``test_round59_runs_jsonsyntax.py`` and
``test_round59_runs_refsyntax.py``): one plan per variant: action 1 ``rec`` is given a
literal ``data`` value and echoes it (``$.json.echo.data``); its output ``o`` is the query;
action 2 ``rec`` gets ``v: $<actions[1].outputs.o>``. Alice approves every plan; one pass.

Asserted per variant: action 2 got exactly the value RFC 9535 selects (or, where the RFC
selects nothing, action 2 never ran and the plan failed ``E_OUTPUT_MISSING``).

Broke: none. Held: all 23 (existence tests over ``false``/``null``/``0``/``""``/``[]``,
``!``, missing == missing, missing is not ``null``, ``Nothing`` == empty, negative index and
steps, step 0 selecting nothing (``E_OUTPUT_MISSING``, action 2 never ran), clamped slices,
duplicate union members kept, ``length()`` in code points and of objects, filters over
object members, ``\\u`` escapes and surrogate pairs in names, code-point string order,
``1 == 1.0`` but not ``true``, ``count()``, nested existence, ``value()``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

D = "$.json.echo.data"
ITEMS_FALSY = {"items": [{"x": 0, "id": 1}, {"x": "", "id": 2}, {"x": [], "id": 3}, {"id": 4}]}

#: vid -> (data, query, expected value of action 2's ``v``; ``MISSING``: nothing selected)
MISSING = object()
SEMANTICS: dict[str, tuple[Any, str, Any]] = {
    "exist-false": ({"items": [{"x": False, "id": 1}, {"id": 2}]}, f"{D}.items[?@.x].id", [1]),
    "exist-null": ({"items": [{"x": None, "id": 1}, {"id": 2}]}, f"{D}.items[?@.x].id", [1]),
    "exist-falsy": (ITEMS_FALSY, f"{D}.items[?@.x].id", [1, 2, 3]),
    "not-exist": (ITEMS_FALSY, f"{D}.items[?!@.x].id", [4]),
    "missing-eq-missing": (
        {"items": [{"id": 1}, {"id": 2, "a": 1}]},
        f"{D}.items[?@.a == @.b].id",
        [1],
    ),
    "missing-not-null": (
        {"items": [{"id": 1}, {"id": 2, "a": None}]},
        f"{D}.items[?@.a == null].id",
        [2],
    ),
    "nothing-eq-missing": (
        {"items": [{"n": 5, "id": 1}, {"n": "ab", "id": 2}]},
        f"{D}.items[?length(@.n) == @.zz].id",
        [1],
    ),
    "neg-index": ({"a": [1, 2, 3]}, f"{D}.a[-1]", 3),
    "rev-slice": ({"a": [1, 2, 3]}, f"{D}.a[::-1]", [3, 2, 1]),
    "neg-slice": ({"a": [1, 2, 3]}, f"{D}.a[-2:]", [2, 3]),
    "step-zero": ({"a": [1, 2, 3]}, f"{D}.a[::0]", MISSING),
    "wide-slice": ({"a": [1, 2, 3]}, f"{D}.a[-10:10:2]", [1, 3]),
    "union-dup": ({"a": [1, 2, 3]}, f"{D}.a[0,0]", [1, 1]),
    "astral-length": (
        {"items": [{"s": "\U0001f600", "id": 1}, {"s": "ab", "id": 2}]},
        f"{D}.items[?length(@.s) == 1].id",
        [1],
    ),
    "object-length": (
        {"items": [{"o": {"a": 1, "b": 2}, "id": 1}, {"o": "xy", "id": 2}, {"o": 12, "id": 3}]},
        f"{D}.items[?length(@.o) == 2].id",
        [1, 2],
    ),
    "object-filter": ({"o": {"a": 1, "b": 2}}, f"{D}.o[?@ > 1]", [2]),
    "escaped-name": ({"a": 5, "\\u0061": 6}, f"{D}['\\u0061']", 5),
    "surrogate-name": ({"\U0001f600": 7}, f"{D}['\\uD83D\\uDE00']", 7),
    "codepoint-order": (
        {"items": [{"s": "\U0001f600", "id": 1}, {"s": "z", "id": 2}]},
        f"{D}.items[?@.s > '\\uFFFF'].id",
        [1],
    ),
    "int-float-bool": (
        {"items": [{"n": 1.0, "id": 1}, {"n": True, "id": 2}]},
        f"{D}.items[?@.n == 1].id",
        [1],
    ),
    "count-fn": ({"items": [{"a": 1, "id": 1}, {"id": 2}]}, f"{D}.items[?count(@.*) == 2].id", [1]),
    "nested-exist": (
        {"items": [{"t": ["x"], "id": 1}, {"t": ["y"], "id": 2}]},
        f"{D}.items[?@.t[?@ == 'x']].id",
        [1],
    ),
    "value-fn": (
        {"items": [{"t": [3], "id": 1}, {"t": [3, 3], "id": 2}]},
        f"{D}.items[?value(@.t[*]) == 3].id",
        [1],
    ),
}

#: Syntax the RFC does not allow: the plan must be refused at validation
#: (``test_round59_runs_jsonsyntax.py``). vid -> query
SYNTAX: dict[str, str] = {
    "lead-zero": f"{D}.a[01]",
    "neg-zero": f"{D}.a[-0]",
    "fullwidth-digit": f"{D}.a[\uff11]",
    "arabic-digit": f"{D}.a[\u0661]",
    "underscore-digit": f"{D}.a[1_0]",
    "plus-sign": f"{D}.a[+1]",
    "index-past-ijson": f"{D}.a[9007199254740992]",
    "slice-past-ijson": f"{D}.a[:9007199254740992]",
    "capital-true": f"{D}.items[?@.x == True]",
    "nonsingular-cmp": f"{D}.items[?@[*] == 1]",
    "length-as-test": f"{D}.items[?length(@.s)]",
    "logical-compared": f"{D}.items[?match(@.s, 'a') == true]",
    "count-of-literal": f"{D}.items[?count(1) == 1]",
    "lone-surrogate": f"{D}['\\uD800']",
    "upper-U-escape": f"{D}['\\U0061']",
    "digit-shorthand": f"{D}.1",
    "trailing-descendant": "$.json..",
    "filter-no-q": f"{D}.items[@.x]",
}

#: Reference paths (docs/plan-format.md "References") in forms no doc names: refused
#: ``E_REF_INVALID`` (``test_round59_runs_refsyntax.py``). vid -> the param value of action 2
REFS: dict[str, str] = {
    "ref-arabic-id": "$<actions[\u0661].outputs.o>",
    "ref-fullwidth-id": "$<actions[\uff11].outputs.o>",
    "ref-plus-id": "$<actions[+1].outputs.o>",
    "ref-zero-lead-id": "$<actions[01].outputs.o>",
    "ref-space-id": "$<actions[ 1].outputs.o>",
    "ref-arabic-index": "$<actions[1].outputs.o[\u0661]>",
    "ref-underscore-index": "$<actions[1].outputs.o[0_0]>",
}


def _plan(vid: str, data: Any, query: str, ref: str = "$<actions[1].outputs.o>") -> str:
    dump = lambda v: json.dumps(v, ensure_ascii=False)  # noqa: E731
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}]\nactions:\n"
        f"  - id: 1\n    tool: rec\n    why: emit\n"
        f"    params: {{tag: {dump(vid + '-1')}, data: {dump(data)}}}\n"
        f"    outputs: [{{name: o, path: {dump(query)}}}]\n"
        f"  - id: 2\n    tool: rec\n    why: use\n"
        f"    params: {{tag: {dump(vid + '-2')}, v: {dump(ref)}}}\n"
    )


def _build(root: Path) -> Lab:
    lab = Lab(root / "jp")
    items = {"items": [{"x": 1, "s": "a", "id": 1}], "a": [1, 2, 3]}
    for vid, (data, query, _) in SEMANTICS.items():
        lab.write(vid, _plan(vid, data, query))
    for vid, query in SYNTAX.items():
        lab.write(vid, _plan(vid, items, query))
    for vid, ref in REFS.items():
        lab.write(vid, _plan(vid, [5, 6], f"{D}", ref))
    lab.write("control", _plan("control", {"a": [1, 2, 3]}, f"{D}.a[1]"))
    lab.commit("plans")
    lab.run()
    for vid in [*SEMANTICS, *SYNTAX, *REFS, "control"]:
        if "frozen" in lab.plan(vid):
            lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


def jp_lab(factory: pytest.TempPathFactory) -> Lab:
    return shared(factory, "r59-jsonpath", _build)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return jp_lab(tmp_path_factory)


def test_control_runs_with_the_selected_value(lab: Lab) -> None:
    got = lab.calls("control-2")
    assert len(got) == 1 and json.loads(got[0]["stdin"])["v"] == 2, got


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(SEMANTICS), list(SEMANTICS), BROKEN))
def test_action_2_gets_what_the_rfc_selects(lab: Lab, vid: str) -> None:
    _, _, want = SEMANTICS[vid]
    got = lab.calls(f"{vid}-2")
    status = lab.plan(vid)["plan"]["status"]
    if want is MISSING:
        assert got == [], got
        assert status == "failed" and "E_OUTPUT_MISSING" in lab.codes(vid), lab.codes(vid)[-1500:]
        return
    assert len(got) == 1, (status, lab.codes(vid)[-1500:])
    assert json.loads(got[0]["stdin"])["v"] == want, got[0]["stdin"]
