# ruff: noqa: E501
"""Round 55 (runs): guards against the shape of outside data. docs/plan-format.md, Flows and
guards: ``matches`` holds when "the value is a string and the *whole* of it matches" (an
unanchored pattern cannot be satisfied by a substring); ``min``/``max`` when "the value is a
number within the bounds"; ``one_of`` by JSON equality ("``true`` is not ``1``"); "a list
value must pass element by element". Earlier rounds sent strings and secrets through
guards; nobody sent the other JSON shapes, a final newline, or a pattern whose ``|`` leaves
one branch unanchored.

Lab ``gs``: ``src`` (``echo``, output untrusted) returns ``{v: VALUE}``; action 2 is
``send`` (records its call; ``sensitive: [to]``) with ``to: $<actions[1].outputs.v>`` and
the variant's guard on ``to``. Alice approves every plan, one pass. Asserted: ``send``
never ran, action 2 failed E_GUARD_FAILED. ``ok-*`` controls: a value the guard lets
through reaches ``send``.

Variants: a final newline after an anchored / unanchored address pattern (``nl-anchored``,
``nl-plain``), an alternation whose first branch is a prefix (``alt``, ``alt-caret``), a
``(?m)`` pattern over two lines (``multiline``), ``true`` for ``min``/``max`` and for
``one_of: [1]`` (``bool-range``, ``bool-oneof``), a numeric string for ``min``/``max``
(``str-num``), a mapping, a list of lists, a list of mappings for an address ``matches``
(``dict``, ``nested-list``, ``list-dict``), a list with one element out of range
(``list-range``).

Result: all held (see the test ids).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

ADDR = "^[^@\\s]+@customer\\.example$"
# id: (value, guard rules, passes)
VARIANTS: dict[str, tuple[Any, dict[str, Any], bool]] = {
    "nl-anchored": ("a@customer.example\n", {"matches": ADDR}, False),
    "nl-plain": ("a@customer.example\n", {"matches": "[a-z]+@customer\\.example"}, False),
    "alt": (
        "a@customer.example.evil.test",
        {"matches": "a@customer\\.example|b@customer\\.example"},
        False,
    ),
    "alt-caret": (
        "a@customer.example.evil.test",
        {"matches": "^a@customer\\.example|^b@customer\\.example$"},
        False,
    ),
    "multiline": (
        "a@customer.example\nevil@attacker.test",
        {"matches": "(?m)^[a-z]+@customer\\.example$"},
        False,
    ),
    "bool-range": (True, {"min": 0, "max": 5}, False),
    "bool-oneof": (True, {"one_of": [1]}, False),
    "str-num": ("3", {"min": 0, "max": 5}, False),
    "dict": ({"x": "evil@attacker.test"}, {"matches": ".*"}, False),
    "nested-list": ([["evil@attacker.test"]], {"matches": ADDR}, False),
    "list-dict": ([{"to": "evil@attacker.test"}], {"matches": ".*"}, False),
    "list-range": ([1, 99], {"min": 0, "max": 5}, False),
    "ok-addr": ("a@customer.example", {"matches": ADDR}, True),
    "ok-list": (["a@customer.example", "b@customer.example"], {"matches": ADDR}, True),
    "ok-float": (1.0, {"one_of": [1]}, True),
}
VIDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}

SEND = """\
import json, os, sys
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": sys.stdin.read()}) + "\\n")
print("{}")
"""


def _plan(vid: str) -> str:
    value, rules, _ = VARIANTS[vid]
    guard = json.dumps({"param": "to", **rules}, ensure_ascii=False)
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: src}, {name: send}]\nactions:\n"
        f"  - id: 1\n    tool: src\n    why: w\n    params: {{v: {json.dumps(value, ensure_ascii=False)}}}\n"
        "    outputs: [{name: v, path: $.v}]\n"
        f'  - id: 2\n    tool: send\n    why: w\n    params: {{tag: {vid}, to: "$<actions[1].outputs.v>"}}\n'
        f"    guards: [{guard}]\n"
    )


def _build(root: Path) -> Lab:
    (root / "send.py").write_text(SEND)
    lab = Lab(root / "gs")
    argv = json.dumps([sys.executable, str(root / "send.py"), "{tag}"])
    lab.write_config(
        tools="src: {kind: echo}\n"
        f"send: {{kind: exec, argv: {argv}, sensitive: [to], env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
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
    return shared(tmp_path_factory, "r55-guardshapes", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_guard_judges_the_shape(lab: Lab, vid: str) -> None:
    passes = VARIANTS[vid][2]
    calls = lab.calls(vid)
    plan = lab.plan(vid)
    text = json.dumps(plan.get("execution"), default=str) + lab.codes(vid)
    if passes:
        assert len(calls) == 1, text[:1000]
        assert json.loads(calls[0]["stdin"])["to"] == VARIANTS[vid][0]
    else:
        assert calls == [], f"send ran with {calls[0]['stdin']}"
        assert "E_GUARD_FAILED" in text, text[:1000]
