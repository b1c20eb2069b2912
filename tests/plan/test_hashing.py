"""The plan hash: JCS (RFC 8785) + SHA-256 over the hashed view, recomputable by anyone."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.plan import hashing
from tests.support.plan_factory import base_data

# Values from RFC 8785 §3.2.2 / appendix B (number serialization) and key ordering by UTF-16.
RFC8785_VECTORS = [
    ({"b": 1, "a": 2}, b'{"a":2,"b":1}'),
    (
        [1e21, 1e-7, -0.0, 0.000001, 1.2345678901234568e20],
        b"[1e+21,1e-7,0,0.000001,123456789012345680000]",
    ),
    (
        {"\u20ac": 1, "\r": 2, "\ufb33": 3, "1": 4, "\U0001f600": 5, "\u0080": 6, "\u00f6": 7},
        '{"\\r":2,"1":4,"\u0080":6,"\u00f6":7,"\u20ac":1,"\U0001f600":5,"\ufb33":3}'.encode(),
    ),
    ({"s": '\u000f\n"\\/'}, b'{"s":"\\u000f\\n\\"\\\\/"}'),
]


def test_jcs_matches_rfc8785_vectors() -> None:
    for value, expected in RFC8785_VECTORS:
        assert hashing.canonical_bytes(value) == expected


def test_hash_is_sha256_of_jcs_of_the_view_recomputable_with_stdlib() -> None:
    data = base_data()
    view = copy.deepcopy(data)
    for key in ("metadata",):
        view.pop(key)
    view["plan"].pop("status")
    view["plan"].pop("created")
    # For this ASCII-only, integer-only document plain sorted json.dumps equals JCS.
    expected = hashlib.sha256(
        json.dumps(view, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    assert hashing.plan_hash(data) == "sha256:" + expected


def _with(data: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(data)
    changed[key] = value
    return changed


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(
    status=st.sampled_from(["draft", "approved", "executing", "completed"]),
    created=st.text(max_size=10),
    metadata=json_values,
    owned=json_values,
)
def test_hash_ignores_status_created_metadata_and_controller_blocks(
    status: str, created: str, metadata: Any, owned: Any
) -> None:
    data = base_data()
    before = hashing.plan_hash(data)
    data["plan"]["status"] = status
    data["plan"]["created"] = created
    data["metadata"] = metadata
    for key in ("frozen", "approval", "execution", "validation"):
        data[key] = owned
    assert hashing.plan_hash(data) == before


@settings(max_examples=60, deadline=None)
@given(value=json_values, where=st.sampled_from(["why", "tool", "params", "retries", "timeout"]))
def test_changing_any_hashed_value_changes_the_hash(value: Any, where: str) -> None:
    data = base_data()
    before = hashing.plan_hash(data)
    action = data["actions"][1]
    if action.get(where) == value:
        return
    action[where] = value
    assert hashing.plan_hash(data) != before


@settings(max_examples=40, deadline=None)
@given(st.permutations(["plan", "metadata", "inputs", "available_tools", "actions"]))
def test_key_order_does_not_matter(order: list[str]) -> None:
    data = base_data()
    reordered = {key: data[key] for key in order}
    reordered["actions"] = [dict(reversed(list(a.items()))) for a in data["actions"]]
    assert hashing.plan_hash(reordered) == hashing.plan_hash(data)


def test_idempotency_key_format() -> None:
    plan_hash = "sha256:" + "ab" * 32
    digest = hashlib.sha256(f"{plan_hash}:3".encode()).hexdigest()[:16]
    assert hashing.idempotency_key(plan_hash, 3) == f"step:{digest}"


# Any text, keys beyond U+FFFF and lone surrogates included; numbers around the safe range.
_TEXT = st.text(st.characters(exclude_categories=()), max_size=8)
_NUMBERS = st.integers(min_value=-(2**54), max_value=2**54) | st.floats(allow_nan=True)
_JSONISH = st.recursive(
    st.none() | st.booleans() | _NUMBERS | _TEXT,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_TEXT, inner, max_size=4)
        | st.tuples(inner, inner)
    ),
    max_leaves=20,
)


def _library(value: Any) -> bytes | str:
    import rfc8785

    try:
        return rfc8785.dumps(value)
    except Exception as exc:
        return type(exc).__name__


@settings(max_examples=400, deadline=None)
@given(_JSONISH)
def test_canonical_bytes_are_the_librarys_for_every_value(value: Any) -> None:
    """The C-encoder path writes exactly what the rfc8785 library writes, and refuses what it
    refuses (a float, a huge integer, a lone surrogate, an astral key: the library's own)."""
    try:
        ours: bytes | str = hashing.canonical_bytes(value)
    except Exception as exc:
        ours = type(exc).__name__
    assert ours == _library(value)


def test_the_fast_path_keeps_utf16_key_order_and_refusals() -> None:
    # U+1F600 sorts before U+FB33 in UTF-16 (a surrogate pair), after it by code point
    value = {"\ufb33": 1, "\U0001f600": 2}
    assert hashing.canonical_bytes(value) == '{"\U0001f600":2,"\ufb33":1}'.encode()
    assert _library({"a": "\ud800"}) == "CanonicalizationError"
    assert _library({"a": 2**53}) == "IntegerDomainError"
    for refused in ({"a": "\ud800"}, {"a": 2**53}, {1: "x"}):
        try:
            hashing.canonical_bytes(refused)
        except Exception as exc:
            assert type(exc).__name__ == _library(refused)
        else:
            raise AssertionError(f"{refused!r} was canonicalised")


_ODD = st.recursive(
    st.none() | st.booleans() | _NUMBERS | _TEXT | st.dates() | st.datetimes(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_TEXT | st.integers() | st.booleans(), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_ODD)
def test_plain_json_data_has_no_non_json_problem(value: Any) -> None:
    """Validation skips the walk for plain data: it finds exactly what the walk finds."""
    from controller.plan import plans

    walked = [(p.code, p.message, p.path) for p in plans._non_json(value, ())]
    found = [(p.code, p.message, p.path) for p in plans.non_json_problems(value)]
    assert found == walked
    if hashing.is_plain_json(value):
        assert walked == []
