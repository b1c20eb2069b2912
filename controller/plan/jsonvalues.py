"""JSON value equality and ordering (RFC 9535 §2.3.5.2.2), the one rule for every comparison
the product makes on JSON values.

Python's ``==`` is not JSON's: ``True == 1``, ``[True] == [1]`` and ``{"a": False} == {"a":
0}`` all hold in Python. Here values of different JSON types are never equal at any depth (a
boolean is not a number), numbers compare as numbers (``1`` equals ``1.0``), arrays element
by element in order, objects by the same keys with equal members. Only numbers and strings
are ordered (strings by Unicode scalar values); ``<`` between booleans, null, arrays or
objects is false, so on them ``<=`` holds only through ``==``.

Users: JSONPath filters (:mod:`controller.plan.jsonpaths`), ``expect`` (``equals``,
``not_equals``, ``in``), guards' ``one_of`` (through :func:`key`) and ``params_schema``
``enum``/``const``/``uniqueItems`` (:mod:`controller.plan.plans`). Round 55 found filters
comparing arrays and objects with Python's ``==``.

Also the one count of a value's JSON text (:func:`text_size`, :func:`scalar_size`), for every
bound stated in "characters of JSON" (``limits.max_params_bytes`` on resolved params and on
an action's outputs): a quote or a backslash is two characters of JSON, a control character
six (round 121: a count of the raw characters let 4,000 allowed become 23,723 sent).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any


def text_size(text: str) -> int:
    """Characters of ``text`` as a JSON string, its quotes included, as the tool receives it
    (escapes as JSON writes them: ``\\"``, ``\\n``, ``\\u0001``; other characters as
    themselves)."""
    return len(encode_basestring(text))


def scalar_size(value: Any) -> int:
    """Characters of a JSON scalar (a string, a number, a boolean, null) as JSON text."""
    if isinstance(value, str):
        return text_size(value)
    if value is None or isinstance(value, bool):
        return 4 if value is not False else 5
    return len(json.dumps(value, default=str))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def equal(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal: type-strict at every depth, ``1`` equals ``1.0``."""
    if _number(a) and _number(b):
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is None and b is None
    return isinstance(a, str) and isinstance(b, str) and a == b


def less(a: Any, b: Any) -> bool:
    """RFC 9535 ``<``: numbers by value, strings by code points; false for any other pair."""
    if _number(a) and _number(b):
        return bool(a < b)
    return isinstance(a, str) and isinstance(b, str) and a < b


def compare(a: Any, operator: str, b: Any) -> bool:
    """``a operator b`` for the six RFC 9535 comparison operators."""
    if operator == "==":
        return equal(a, b)
    if operator == "!=":
        return not equal(a, b)
    if operator == "<":
        return less(a, b)
    if operator == ">":
        return less(b, a)
    if operator == "<=":
        return less(a, b) or equal(a, b)
    if operator == ">=":
        return less(b, a) or equal(a, b)
    return False


def canonical(value: Any) -> Any:
    """``value`` with integral floats as ints at every depth (JSON: ``1`` equals ``1.0``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def key(value: Any) -> str:
    """A hashable form of ``value``: ``key(a) == key(b)`` exactly when ``equal(a, b)``
    (sets of allowed values: pairwise comparison of thousands took seconds, round 20)."""
    return json.dumps(canonical(value), sort_keys=True, ensure_ascii=False, default=str)
