# ruff: noqa: E501
"""Round 56 (runs): an output's (or an input's) name that a reference path would read as
another. docs/plan-format.md: ``$<actions[N].outputs.NAME>`` "and a path into it", a path
being ``.name``, ``[index]`` or ``['key']``. A declared name holding ``.``, ``[``, a quote, a
blank, a line break, a zero-width character, another Unicode normal form, or declared twice
would let ``$<actions[1].outputs.a.b>`` mean output ``a.b`` to one reader and output ``a``'s
``b`` to another (a reviewer, the engine, ``show``): the value that reaches the tool would
be the one the reviewer did not pick.

Lab ``on``: action 1 ``echo`` of ``{x: X, y: Y, z: [Z], a: {b: AB}}`` declares the variant's
outputs (or the plan declares the variant's ``inputs``); action 2 ``rec`` takes ``v`` = the
variant's reference. Alice approves every plan; one pass.

Asserted: a plan whose names are ambiguous is invalid (``E_SCHEMA_INVALID`` /
``E_REF_UNKNOWN`` in ``validation``) and ``rec`` never ran; the controls (``case``: ``A`` and
``a`` are two names; ``in-nested``: an input mapping read through a path) get exactly the
value their reference names.

Also: ``in-dot`` (``inputs: {"a.b": X, a: {b: AB}}``, ``$<inputs.a.b>``), ``in-bracket``
(``{"a[0]": X, a: [Z]}``, ``$<inputs.a[0]>``); ``in-dot-alone`` (only ``"a.b"``) and
``in-quoted`` (``$<inputs['a.b']>``) must give ``X`` or be refused.

Result: every output-name variant held (output names must match
``^[A-Za-z_][A-Za-z0-9_-]*$``, twice is refused), ``in-dot-alone`` and ``in-quoted`` held.
**Broke** (2): ``in-dot`` and ``in-bracket``: input keys take any string, so
``$<inputs.a.b>``, which docs/plan-format.md spells ``$<inputs.KEY>`` and ``plangate show``
prints under ``Inputs: {"a": {"b": "AB"}, "a.b": "X"}``, reaches ``rec`` as ``AB`` (``Z`` for
``a[0]``): the reviewer reads the input ``a.b``, the tool gets input ``a``'s ``b``. Should:
refuse input keys a reference cannot name plainly (as output names are), or refuse the
reference that two inputs can answer.

Fixed (2026-11-29): one identifier rule for output names and input keys (the plan's
``inputs`` and a nested action's): ``^[A-Za-z_][A-Za-z0-9_-]*$``, else E_SCHEMA_INVALID at
``inputs["a.b"]`` with a remedy, at validate and freeze (``plan.schema.Name``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

INVALID = object()
# id: (outputs, inputs, reference, expected)
VARIANTS: dict[str, tuple[str, str, str, Any]] = {
    "dot": (
        '[{name: "a.b", path: $.x}, {name: a, path: $.a}]',
        "",
        "actions[1].outputs.a.b",
        INVALID,
    ),
    "dot-quoted": ('[{name: "a.b", path: $.x}]', "", "actions[1].outputs['a.b']", INVALID),
    "bracket": (
        '[{name: "a[0]", path: $.x}, {name: a, path: $.z}]',
        "",
        "actions[1].outputs.a[0]",
        INVALID,
    ),
    "twice": ("[{name: a, path: $.x}, {name: a, path: $.y}]", "", "actions[1].outputs.a", INVALID),
    "empty": ('[{name: "", path: $.x}]', "", "actions[1].outputs.x", INVALID),
    "quote": ('[{name: "a\']", path: $.x}]', "", "actions[1].outputs.x", INVALID),
    "blank": (
        '[{name: " a", path: $.x}, {name: a, path: $.y}]',
        "",
        "actions[1].outputs.a",
        INVALID,
    ),
    "newline": (
        '[{name: "a\\n", path: $.x}, {name: a, path: $.y}]',
        "",
        "actions[1].outputs.a",
        INVALID,
    ),
    "zero-width": (
        '[{name: "a\\u200b", path: $.x}, {name: a, path: $.y}]',
        "",
        "actions[1].outputs.a",
        INVALID,
    ),
    "nfd": (
        '[{name: "caf\\u00e9", path: $.x}, {name: "cafe\\u0301", path: $.y}]',
        "",
        "actions[1].outputs.y",
        INVALID,
    ),
    "in-dot": ("", 'inputs: {"a.b": X, a: {b: AB}}\n', "inputs.a.b", INVALID),
    "in-bracket": ("", 'inputs: {"a[0]": X, a: [Z]}\n', "inputs.a[0]", INVALID),
    "in-dot-alone": ("", 'inputs: {"a.b": X}\n', "inputs.a.b", ("X", INVALID)),
    "in-quoted": ("", 'inputs: {"a.b": X, a: {b: AB}}\n', "inputs['a.b']", ("X", INVALID)),
    "case": ("[{name: A, path: $.x}, {name: a, path: $.y}]", "", "actions[1].outputs.a", "Y"),
    "in-nested": ("", "inputs: {a: {b: AB}}\n", "inputs.a.b", "AB"),
}
IDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}


def _plan(vid: str) -> str:
    outputs, inputs, ref, _ = VARIANTS[vid]
    out = f"    outputs: {outputs}\n" if outputs else ""
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n{inputs}"
        "available_tools: [{name: echo}, {name: rec}]\nactions:\n"
        f"  - id: 1\n    tool: echo\n    why: w\n    params: {{x: X, y: Y, z: [Z], a: {{b: AB}}}}\n{out}"
        f'  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {vid}, v: "$<{ref}>"}}\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root / "on")
    for vid in IDS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in IDS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-outnames", _build)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_name_reads_one_way(lab: Lab, vid: str) -> None:
    expected = VARIANTS[vid][3]
    calls = lab.calls(vid)
    plan = lab.plan(vid)
    if isinstance(expected, tuple):  # the value the reviewer reads, or refused
        if not calls:
            expected = INVALID
        else:
            assert json.loads(calls[0]["stdin"])["v"] == expected[0], calls
            return
    if expected is INVALID:
        assert calls == [], f"rec ran with {calls[0]['stdin']}"
        codes = json.dumps(plan.get("validation"))
        assert "E_SCHEMA_INVALID" in codes or "E_REF_UNKNOWN" in codes, codes[:600]
    else:
        assert len(calls) == 1, json.dumps(plan.get("execution"), default=str)[:600]
        assert json.loads(calls[0]["stdin"])["v"] == expected, calls
