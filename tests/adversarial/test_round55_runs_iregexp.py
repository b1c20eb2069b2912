# ruff: noqa: E501
"""Round 55 (runs): RFC 9535 filters and RFC 9485 I-Regexps that pick what fills a param or
whether an action counts as done. docs/plan-format.md: an output's ``path`` is "an RFC 9535
JSONPath query"; ``expect``'s ``matches`` is "an I-Regexp, RFC 9485, matched against the
whole string"; comparisons are JSON comparisons ("``true`` is not ``1``"). In I-Regexp ``^``
and ``$`` are ordinary characters (RFC 9485 §3, ``NormalChar``), ``.`` is any character but
LF and CR, and there are no multi-character escapes (``\\d``), inline flags, back-references
or lazy quantifiers: RFC 9535 §2.4.6/7 make ``match()``/``search()`` of a pattern that is
no I-Regexp LogicalFalse. A tool's output then decides which value the next tool gets (a
filter), or whether a step "succeeded" (a verify), by rules the reviewer did not approve.

Lab ``ir``: one plan per variant, approved by Alice, one pass. Filters (``f-*``): action 1
is ``echo`` of ``{d: [...]}`` with ``outputs: [{name: v, path: QUERY}]``; action 2 ``rec``
gets ``v: $<actions[1].outputs.v>``. Asserted: ``rec`` got exactly the RFC's node list, or
(RFC: nothing matched) ``rec`` never ran and action 1 is E_OUTPUT_MISSING. Verify
(``x-*``): action 1 ``echo`` of ``{s: VALUE}`` with ``verify: {expect: {path: $.s, OP}}``;
asserted: ``rec`` (action 2) ran iff the clause holds by the RFCs, else action 1 failed.

Broke (5: ``^`` and ``$`` read as Python anchors, in the filters' ``match``/``search``
and in ``expect``): ``f-caret-lit`` (``match(@.s, '^ab$')`` selects ``"ab"``, not the
literal ``"^ab$"``), ``f-search-caret`` (``search(@.s, '^b')`` anchors: selects
``"b-first"``, skips ``"a^b"``), ``f-search-dollar`` (``search(@.s, 'b$')`` selects
``"ab\\n"``: Python's ``$`` also matches before a final newline), ``x-caret`` (``matches:
"^ok$"`` holds for ``ok``), ``x-caret-lit`` (it fails for the literal ``^ok$``).
Held: the patterns that are no I-Regexp (``f-dclass`` ``\\d``, ``f-flag`` ``(?i)``,
``f-lazy`` ``a+?``: LogicalFalse, E_OUTPUT_MISSING; ``x-dclass``, ``x-flag``: refused
E_SCHEMA_INVALID "not an I-Regexp"), ``f-pcat`` (``\\p{Lu}`` works), ``f-match-nl``, ``f-dot-cr``, ``f-bool-eq`` (``true == 1`` false), ``f-bool-lt``,
``f-missing-eq`` (two missing members equal), ``f-exist-null``, ``x-nl`` (``ok\\n`` is not
``ok``), ``x-bool-eq``, ``x-bool-in``, ``x-false-zero``, ``x-nfd``.

Fixed (2026-11-29): the five breaks. ``match()``/``search()`` and ``matches`` go through
``controller.plan.regexes``, which translates an I-Regexp for the ``regex`` engine with RFC
9485's meaning (``^``/``$`` literal, ``.`` any character but LF and CR); ``match()`` and
``matches`` use ``fullmatch``, ``search()`` ``search``, never an anchor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

MISSING = object()

# id: (data, query, expected node list or MISSING)
FILTERS: dict[str, tuple[Any, str, Any]] = {
    "f-caret-lit": (
        [{"s": "ab", "k": "plain"}, {"s": "^ab$", "k": "lit"}],
        "$.d[?match(@.s, '^ab$')].k",
        ["lit"],
    ),
    "f-search-caret": (
        [{"s": "b-first", "k": "anch"}, {"s": "a^b", "k": "lit"}],
        "$.d[?search(@.s, '^b')].k",
        ["lit"],
    ),
    "f-search-dollar": (
        [{"s": "ab\n", "k": "nl"}, {"s": "ab$", "k": "lit"}],
        "$.d[?search(@.s, 'b$')].k",
        ["lit"],
    ),
    "f-dclass": ([{"s": "12", "k": "digits"}], "$.d[?match(@.s, '\\\\d+')].k", MISSING),
    "f-flag": ([{"s": "ab", "k": "folded"}], "$.d[?match(@.s, '(?i)AB')].k", MISSING),
    "f-lazy": ([{"s": "a", "k": "lazy"}], "$.d[?match(@.s, 'a+?')].k", MISSING),
    "f-pcat": (
        [{"s": "AB", "k": "upper"}, {"s": "ab", "k": "lower"}],
        "$.d[?match(@.s, '\\\\p{Lu}+')].k",
        ["upper"],
    ),
    "f-match-nl": ([{"s": "ab\n", "k": "nl"}], "$.d[?match(@.s, 'ab')].k", MISSING),
    "f-dot-cr": (
        [{"s": "a\rb", "k": "cr"}, {"s": "axb", "k": "x"}],
        "$.d[?match(@.s, 'a.b')].k",
        ["x"],
    ),
    "f-bool-eq": ([{"n": True, "k": "bool"}, {"n": 1, "k": "one"}], "$.d[?@.n == 1].k", ["one"]),
    "f-bool-lt": ([{"n": True, "k": "bool"}, {"n": 0, "k": "zero"}], "$.d[?@.n < 2].k", ["zero"]),
    "f-missing-eq": ([{"k": "none"}, {"x": 1, "k": "one"}], "$.d[?@.x == @.y].k", ["none"]),
    "f-exist-null": ([{"a": None, "k": "null"}, {"k": "absent"}], "$.d[?@.a].k", ["null"]),
}
# id: (value, clause, holds by the RFCs)
VERIFY: dict[str, tuple[Any, dict[str, Any], bool]] = {
    "x-caret": ("ok", {"matches": "^ok$"}, False),
    "x-dclass": ("12", {"matches": "\\d+"}, False),
    "x-flag": ("ok", {"matches": "(?i)OK"}, False),
    "x-nl": ("ok\n", {"matches": "ok"}, False),
    "x-bool-eq": (True, {"equals": 1}, False),
    "x-bool-in": (True, {"in": [1]}, False),
    "x-false-zero": (False, {"equals": 0}, False),
    "x-nfd": ("e\u0301", {"equals": "\u00e9"}, False),
    "x-caret-lit": ("^ok$", {"matches": "^ok$"}, True),
    "x-control": ("ok", {"matches": "o."}, True),
}
VIDS = list(FILTERS) + list(VERIFY)

BROKEN: dict[str, Any] = {}


def _plan(vid: str) -> str:
    head = f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\navailable_tools: [{{name: echo}}, {{name: rec}}]\nactions:\n"
    dump = lambda v: json.dumps(v, ensure_ascii=False)  # noqa: E731
    if vid in FILTERS:
        data, query, _ = FILTERS[vid]
        one = f"  - id: 1\n    tool: echo\n    why: w\n    params: {{d: {dump(data)}}}\n    outputs: [{{name: v, path: {dump(query)}}}]\n"
    else:
        value, clause, _ = VERIFY[vid]
        expect = {"path": "$.s", **clause}
        one = f"  - id: 1\n    tool: echo\n    why: w\n    params: {{s: {dump(value)}}}\n    verify: {{expect: {dump(expect)}}}\n"
    two = f'  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {vid}, v: "$<actions[1].{"outputs.v" if vid in FILTERS else "result.s"}>"}}\n'
    return head + one + two


def _build(root: Path) -> Lab:
    lab = Lab(root / "ir")
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
    return shared(tmp_path_factory, "r55-iregexp", _build)


def _error(lab: Lab, vid: str) -> str:
    plan = lab.plan(vid)
    return json.dumps(plan.get("execution"), default=str) + lab.codes(vid)


@pytest.mark.parametrize("vid", cases(list(FILTERS), list(FILTERS), BROKEN))
def test_filter_selects_what_the_rfc_selects(lab: Lab, vid: str) -> None:
    expected = FILTERS[vid][2]
    calls = lab.calls(vid)
    if expected is MISSING:
        assert calls == [], f"the filter selected {calls[0]['stdin'] if calls else ''}"
        assert "E_OUTPUT_MISSING" in _error(lab, vid), _error(lab, vid)[:800]
    else:
        assert calls, f"nothing selected: {_error(lab, vid)[:800]}"
        assert json.loads(calls[0]["stdin"])["v"] == expected, calls


@pytest.mark.parametrize("vid", cases(list(VERIFY), list(VERIFY), BROKEN))
def test_verify_holds_as_the_rfc_says(lab: Lab, vid: str) -> None:
    holds = VERIFY[vid][2]
    calls = lab.calls(vid)
    if holds:
        assert len(calls) == 1, _error(lab, vid)[:800]
    else:
        assert calls == [], "the clause held: the action counted as done and action 2 ran"
        text = _error(lab, vid)
        assert "E_VERIFY_FAILED" in text or "E_SCHEMA_INVALID" in text, text[:800]
