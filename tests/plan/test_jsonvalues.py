"""One JSON equality and ordering (RFC 9535 §2.3.5.2.2) for filters, expect, guards and
params_schema (round 55: Python's ``==`` read ``[true]`` as ``[1]`` inside filters)."""

from __future__ import annotations

from typing import Any

import pytest

from controller.execution import checks
from controller.plan import jsonpaths, jsonvalues, plans

# (left, operator, right, holds)
TABLE: list[tuple[Any, str, Any, bool]] = [
    (1, "==", 1.0, True),
    (True, "==", 1, False),
    (False, "==", 0, False),
    (None, "==", False, False),
    (None, "==", None, True),
    ("1", "==", 1, False),
    ([True], "==", [1], False),
    ([1.0], "==", [1], True),
    ({"a": False}, "==", {"a": 0}, False),
    ({"a": 1.0, "b": [2]}, "==", {"b": [2.0], "a": 1}, True),
    ({"n": [{"m": True}]}, "==", {"n": [{"m": 1}]}, False),
    ({"n": [{"m": 1.0}]}, "==", {"n": [{"m": 1}]}, True),
    ([1, 2], "==", [2, 1], False),
    ({"a": 1}, "==", {"a": 1, "b": 2}, False),
    ([True], "!=", [1], True),
    (1, "<", 2, True),
    (1.5, "<", 1, False),
    ("a", "<", "b", True),
    ("b", "<", "a", False),
    (False, "<", True, False),
    (None, "<", None, False),
    ([1], "<", [2], False),
    ({"x": 1}, "<", {"x": 2}, False),
    ("1", "<", 2, False),
    ([True], "<=", [1], False),
    ([1.0], "<=", [1], True),
    ({"a": 1}, ">=", {"a": 1.0}, True),
    (True, "<=", True, True),
    (True, ">=", 1, False),
    (2, ">", 1, True),
]


@pytest.mark.parametrize(("left", "op", "right", "holds"), TABLE)
def test_rfc9535_comparison_table(left: Any, op: str, right: Any, holds: bool) -> None:
    assert jsonvalues.compare(left, op, right) is holds


@pytest.mark.parametrize(("left", "op", "right", "holds"), TABLE)
def test_filters_compare_by_the_table(left: Any, op: str, right: Any, holds: bool) -> None:
    data = {"d": [{"a": left, "b": right, "k": "k"}]}
    nodes, _ = jsonpaths.find(f"$.d[?@.a {op} @.b].k", data)
    assert nodes == (["k"] if holds else [])


@pytest.mark.parametrize(("left", "op", "right", "holds"), [t for t in TABLE if t[1] == "=="])
def test_every_equality_agrees(left: Any, op: str, right: Any, holds: bool) -> None:
    assert checks.same(left, right) is holds
    assert (jsonvalues.key(left) == jsonvalues.key(right)) is holds
    schema = {"properties": {"v": {"enum": [right]}, "w": {"const": right}}}
    assert (not list(plans.params_errors({"v": left, "w": left}, schema))) is holds


def test_an_empty_side_equals_only_an_empty_side() -> None:
    data = {"d": [{"a": 1, "k": "k"}]}
    assert jsonpaths.find("$.d[?@.x == @.y].k", data)[0] == ["k"]
    assert jsonpaths.find("$.d[?@.x <= @.y].k", data)[0] == ["k"]
    assert jsonpaths.find("$.d[?@.x == @.a].k", data)[0] == []
    assert jsonpaths.find("$.d[?@.x != @.a].k", data)[0] == ["k"]
    assert jsonpaths.find("$.d[?@.x < @.y].k", data)[0] == []


def test_unique_items_uses_the_same_equality() -> None:
    schema = {"properties": {"v": {"uniqueItems": True}}}
    assert not list(plans.params_errors({"v": [[True], [1]]}, schema))
    assert list(plans.params_errors({"v": [[1.0], [1]]}, schema))
