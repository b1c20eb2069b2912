# ruff: noqa: E501
"""Round 55 (runs): a reference's path into a value of the wrong shape. docs/plan-format.md:
"``$<actions[N].outputs.NAME[0]>`` ...and a path into it", "A path is a sequence of
``.name``, ``[index]`` or ``['key']``", and "a reference to ... an optional output that
matched nothing, fails the action with ``E_REF_UNAVAILABLE``". The output's shape is the
tool's to choose at run time; the path is the reviewer's. A Python walk indexes a string
(``"abc"[0]`` is ``"a"``), reads a mapping by an integer or a list by a digit string, or
finds an attribute, each handing the next tool a value the path never named.

Lab ``rp``: one plan per variant; action 1 ``echo`` of ``{v: VALUE}`` with output ``v``
(``$.v``); action 2 ``rec`` with ``x: $<actions[1].outputs.v PATH>`` (or
``$<actions[1].result.v PATH>``). Alice approves, one pass. Asserted: where the path names
nothing in the value, ``rec`` never ran and the plan says E_REF_UNAVAILABLE (or the plan was
refused at validation, E_REF_INVALID); ``ok-*`` controls get the value the path names.

Result: all held (see the ids).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

NOTHING = object()
# id: (value, reference, expected value or NOTHING)
VARIANTS: dict[str, tuple[Any, str, Any]] = {
    "str-index": ("abc", "outputs.v[0]", NOTHING),
    "str-index-result": ("abc", "result.v[1]", NOTHING),
    "nested-str": ({"s": "xyz"}, "outputs.v.s[2]", NOTHING),
    "map-int": ({"0": "zero"}, "outputs.v[0]", NOTHING),
    "list-digit-key": (["a"], "outputs.v['0']", NOTHING),
    "list-name": (["a"], "outputs.v.count", NOTHING),
    "str-attr": ("abc", "outputs.v.upper", NOTHING),
    "bool-name": (True, "outputs.v.real", NOTHING),
    "num-name": (5, "outputs.v.numerator", NOTHING),
    "null-name": (None, "outputs.v.x", NOTHING),
    "dict-method": ({"a": 1}, "outputs.v.keys", NOTHING),
    "past-end": (["a", "b"], "outputs.v[2]", NOTHING),
    "ok-dotted": ({"a.b": 1, "a": {"b": 2}}, "outputs.v['a.b']", 1),
    "ok-nested": ({"a.b": 1, "a": {"b": 2}}, "outputs.v.a.b", 2),
    "ok-index": (["a", "b"], "outputs.v[1]", "b"),
}
VIDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}


def _plan(vid: str) -> str:
    value, ref, _ = VARIANTS[vid]
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: echo}, {name: rec}]\nactions:\n"
        f"  - id: 1\n    tool: echo\n    why: w\n    params: {{v: {json.dumps(value)}}}\n"
        "    outputs: [{name: v, path: $.v}]\n"
        f'  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {vid}, x: "$<actions[1].{ref}>"}}\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root / "rp")
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
    return shared(tmp_path_factory, "r55-refpaths", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_a_path_names_only_what_is_there(lab: Lab, vid: str) -> None:
    expected = VARIANTS[vid][2]
    calls = lab.calls(vid)
    text = json.dumps(lab.plan(vid).get("execution"), default=str) + lab.codes(vid)
    if expected is NOTHING:
        assert calls == [], f"rec ran with {calls[0]['stdin']}"
        assert "E_REF_UNAVAILABLE" in text, text[:1000]
    else:
        assert len(calls) == 1, text[:1000]
        assert json.loads(calls[0]["stdin"])["x"] == expected, calls
