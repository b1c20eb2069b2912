# ruff: noqa: E501
"""Round 55 (runs): ``true`` is not ``1`` one level down. docs/plan-format.md: "Comparisons
are JSON comparisons (``true`` is not ``1``; ``1`` is ``1.0``)" for ``expect``; a guard's
``one_of`` holds when "the value equals one of the listed JSON values (``1`` equals
``1.0``; ``true`` is not ``1``)"; RFC 9535 §2.3.5.2.2 compares arrays and objects member by
member with the same rule; a ``params_schema`` ``enum``/``const`` is JSON Schema equality.
Round 55's shapes module found the top-level cases held; Python's ``==`` says ``[True] ==
[1]`` and ``{"a": False} == {"a": 0}``, so a check written for the inside of a value may
not apply the rule there.

Lab ``nb``: ``src`` (``echo``, untrusted) hands back the value; the plans:

- guards (``g-*``): ``send`` (``sensitive: [to]``) gets ``to: $<actions[1].outputs.v>``
  with ``one_of: [ALLOWED]`` (a mapping: a list value is judged element by element);
- expect (``x-*``): ``echo`` of ``{s: VALUE}`` with ``verify: {expect: {path: $.s,
  equals: EXPECTED}}``, then ``rec``;
- filters (``f-*``): ``echo`` of ``{d: [{a: X, b: Y, k: k}]}``, output ``$.d[?@.a ==
  @.b].k``, then ``rec``;
- schema (``s-*``): ``pick`` (``params_schema`` ``enum: [ALLOWED]``) gets the output.

Asserted: the value that differs from the allowed one only by a ``true``/``1`` or
``false``/``0`` inside a list or a mapping never passes (``send``/``rec``/``pick`` not
called, E_GUARD_FAILED / E_VERIFY_FAILED / E_OUTPUT_MISSING / E_PARAMS_INVALID); the
controls (``*-ok``: ``1.0`` for ``1`` inside) pass.

Broke (4): the filters, ``f-list``, ``f-map``, ``f-deep``: ``@.a == @.b`` held for
``[true]`` against ``[1]``, ``{"a": false}`` against ``{"a": 0}`` and one level deeper, and
``f-le-list`` (``@.a <= @.b``, ``[true]`` against ``[1]``), so the output selected the
element and the next action ran (RFC 9535: not equal; the
top-level ``true == 1`` holds, round 55's ``iregexp`` ``f-bool-eq``). Held: the guards'
``one_of`` (``g-list``, ``g-map``, ``g-deep``), ``expect`` ``equals`` (``x-list``,
``x-map``, ``x-in-list``: ``[true]`` in ``[[1]]``), ``params_schema`` ``enum``
(``s-list``, ``s-map``), and ordering (``f-lt-list`` ``[1] < [2]``, ``f-lt-bool`` ``false <
true``, ``f-lt-map``: false, as RFC 9535 says).

Fixed (2026-11-29): one JSON equality and ordering, ``controller/plan/jsonvalues.py``
(type-strict at every depth: a boolean is never a number, ``1`` is ``1.0``; only numbers
and strings are ordered, so ``<=`` on arrays and objects holds only through ``==``). The
JSONPath library's ``ComparisonExpression.evaluate`` is replaced by one that uses it (in
``controller/plan/jsonpaths.py``'s environment, as its other bounded parts), and the same
rule serves ``expect``, guards' ``one_of`` and ``params_schema``'s ``enum``, ``const`` and
``uniqueItems``: ``f-list``, ``f-map``, ``f-deep`` and ``f-le-list`` select nothing
(E_OUTPUT_MISSING, ``rec`` not called).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

# id: (kind, value, allowed/expected/other, passes)
VARIANTS: dict[str, tuple[str, Any, Any, bool]] = {
    "g-list": ("g", {"l": [True]}, {"l": [1]}, False),
    "g-map": ("g", {"a": False}, {"a": 0}, False),
    "g-deep": ("g", {"n": [{"m": True}]}, {"n": [{"m": 1}]}, False),
    "g-ok": ("g", {"l": [1.0]}, {"l": [1]}, True),
    "x-list": ("x", [True], [1], False),
    "x-map": ("x", {"a": False}, {"a": 0}, False),
    "x-ok": ("x", {"a": 1.0}, {"a": 1}, True),
    "f-list": ("f", [True], [1], False),
    "f-map": ("f", {"a": False}, {"a": 0}, False),
    "f-deep": ("f", {"n": [{"m": True}]}, {"n": [{"m": 1}]}, False),
    "f-ok": ("f", [1.0], [1], True),
    "f-lt-list": ("f", [1], [2], False),
    "f-lt-bool": ("f", False, True, False),
    "f-le-list": ("f", [True], [1], False),
    "f-lt-map": ("f", {"x": 1}, {"x": 2}, False),
    "f-le-ok": ("f", [1.0], [1], True),
    "x-in-list": ("x", [True], [[1]], False),
    "s-list": ("s", [True], [1], False),
    "s-map": ("s", {"a": False}, {"a": 0}, False),
    "s-ok": ("s", [1.0], [1], True),
}
VIDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}
OPS = {"f-lt-list": "<", "f-lt-bool": "<", "f-le-list": "<=", "f-lt-map": "<", "f-le-ok": "<="}
CODE = {
    "g": "E_GUARD_FAILED",
    "x": "E_VERIFY_FAILED",
    "f": "E_OUTPUT_MISSING",
    "s": "E_PARAMS_INVALID",
}


def _d(v: Any) -> str:
    return json.dumps(v)


def _plan(vid: str) -> str:
    kind, value, other, _ = VARIANTS[vid]
    head = f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\navailable_tools: [{{name: src}}, {{name: send}}, {{name: echo}}, {{name: rec}}, {{name: pick}}]\nactions:\n"
    src = f"  - id: 1\n    tool: src\n    why: w\n    params: {{v: {_d(value)}}}\n    outputs: [{{name: v, path: $.v}}]\n"
    if kind == "g":
        return (
            head
            + src
            + f'  - id: 2\n    tool: send\n    why: w\n    params: {{tag: {vid}, to: "$<actions[1].outputs.v>"}}\n    guards: [{{param: to, one_of: [{_d(other)}]}}]\n'
        )
    if kind == "s":
        return (
            head
            + src
            + f'  - id: 2\n    tool: pick\n    why: w\n    params: {{tag: {vid}, v: "$<actions[1].outputs.v>"}}\n'
        )
    if kind == "x":
        op = "in" if vid == "x-in-list" else "equals"
        one = f"  - id: 1\n    tool: echo\n    why: w\n    params: {{s: {_d(value)}}}\n    verify: {{expect: {{path: $.s, {op}: {_d(other)}}}}}\n"
    else:
        one = f"  - id: 1\n    tool: echo\n    why: w\n    params: {{d: [{{a: {_d(value)}, b: {_d(other)}, k: k}}]}}\n    outputs: [{{name: v, path: '$.d[?@.a {OPS.get(vid, '==')} @.b].k'}}]\n"
    return head + one + f"  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {vid}}}\n"


def _build(root: Path) -> Lab:
    lab = Lab(root / "nb")
    argv = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    log = json.dumps(str(lab.log))
    enums = {"type": "object", "properties": {"v": {"enum": [[1], {"a": 0}]}}}
    lab.write_config(
        tools="src: {kind: echo}\n"
        f"send: {{kind: exec, argv: {argv}, sensitive: [to], env: {{REC_LOG: {log}}}}}\n"
        f"pick: {{kind: exec, argv: {argv}, env: {{REC_LOG: {log}}}, params_schema: {json.dumps(enums)}}}\n"
    )
    for vid in VIDS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-nestedbool", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_true_is_not_one_inside_a_value(lab: Lab, vid: str) -> None:
    kind, _, _, passes = VARIANTS[vid]
    calls = lab.calls(vid)
    text = json.dumps(lab.plan(vid).get("execution"), default=str) + lab.codes(vid)
    if passes:
        assert len(calls) == 1, text[:1000]
    else:
        assert calls == [], f"it passed: {calls[0]['stdin']}"
        assert CODE[kind] in text, text[:1000]
