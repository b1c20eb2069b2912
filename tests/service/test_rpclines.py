"""The measure of a JSON-RPC line before any parser reads it (controller/service/rpclines.py)
and the replies the server can always write (mcpserver._writable). Round 125: a line 1,000
levels deep raised RecursionError in the server's read and ended the session."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.service import rpclines
from controller.service.mcpserver import _writable
from controller.service.rpclines import MAX_DEPTH, MAX_NUMBER_CHARS, Unread, screen


def _nested(depth: int, inner: str = "1") -> str:
    text = inner
    for level in range(depth):
        text = f"[{text}]" if level % 2 else f'{{"k":{text}}}'
    return text


def test_the_bound_is_inclusive_and_counts_objects_and_arrays_alike() -> None:
    assert screen(_nested(MAX_DEPTH)) is None
    assert screen(_nested(MAX_DEPTH + 1)) == Unread(f"nested deeper than {MAX_DEPTH} levels")
    assert screen("[" * (MAX_DEPTH + 1)) is not None  # cut off: measured all the same


def test_brackets_and_digits_inside_strings_are_text() -> None:
    text = json.dumps({"plan": "[{" * 5000 + "9" * 5000, "q": '"\\[' * 300})
    assert screen(text) is None


def test_a_number_is_measured_whole() -> None:
    assert screen(f'{{"a":-0.{"1" * (MAX_NUMBER_CHARS - 3)}}}') is None
    assert screen(f'{{"a":-0.{"1" * (MAX_NUMBER_CHARS - 2)}}}') == Unread(
        f"a number longer than {MAX_NUMBER_CHARS} characters"
    )
    assert screen(f'{{"a":1{"0" * 400}e+{"1" * 400}.{"2" * 400}}}') is not None  # one token


@pytest.mark.parametrize(
    ("line", "request_id"),
    [
        ('{"jsonrpc":"2.0","id":5,"method":"ping","params":DEEP}', 5),
        ('{"params":DEEP,"method":"ping","id":-12}', -12),
        ('{"id":"a\\u0062","method":"p\\u0069ng","params":DEEP}', "ab"),
        ('{"id":1,"id":2,"method":"ping","params":DEEP}', 2),  # the last, as json reads
        ('{"id":5,"method":7,"params":DEEP}', None),  # no string method: no request
        ('{"id":5,"params":DEEP}', None),
        ('{"id":1.5,"method":"ping","params":DEEP}', None),  # no id type
        ('{"id":true,"method":"ping","params":DEEP}', None),
        ('{"id":"\\ud800","method":"ping","params":DEEP}', None),  # a reply could not quote it
        ('{"id":DEEP,"method":"ping"}', None),
        ('{"x":{"id":5,"method":"ping"},"p":DEEP}', None),  # not the top object's
        ('[{"id":5,"method":"ping"},DEEP]', None),
    ],
)
def test_the_id_is_the_top_objects_own_when_it_can_be_read(line: str, request_id: Any) -> None:
    unread = screen(line.replace("DEEP", "[" * 200 + "]" * 200))
    assert unread is not None and unread.request_id == request_id, unread


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=40,
)


@settings(max_examples=200, deadline=None)  # no timing: a loaded machine
@given(json_values, st.integers(min_value=0, max_value=3 * MAX_DEPTH))
def test_a_line_passes_exactly_when_within_the_depth(value: Any, extra: int) -> None:
    """Whatever the values, a line is refused for depth exactly when its nesting passes the
    bound, and every line that passes is read by Python's json without recursion trouble."""
    line = "[" * extra + json.dumps(value) + "]" * extra
    deepest = extra + _depth(value)
    unread = screen(line)
    assert (unread is not None) == (deepest > MAX_DEPTH), (deepest, unread)
    if unread is None:
        json.loads(line)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def test_the_bounds_are_below_every_readers_limit() -> None:
    """A line at both bounds is read by Python's json and by the SDK's reader."""
    from mcp import types

    at = f'{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{_nested(MAX_DEPTH - 2)},'
    at += f'"n":{"9" * MAX_NUMBER_CHARS}}}}}'
    assert screen(at) is None and rpclines.MAX_NUMBER_CHARS < 4300
    json.loads(at)
    types.jsonrpc_message_adapter.validate_json(at, by_name=False)


def _reply(result: Any, request_id: Any = 3) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCResponse

    return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


def test_a_reply_that_cannot_be_written_is_that_requests_internal_error() -> None:
    """The SDK's writer raised on it (a lone surrogate, past pydantic's depth), ending the
    session: the request gets -32603 instead, with its id."""
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(300):
        inner["a"] = inner = {}
    for result in ({"text": "\ud800"}, deep):
        message = _writable(_reply(result)).message
        assert message.id == 3 and message.error.code == -32603, message
        assert "could not be written" in message.error.message
        message.model_dump_json()
    kept = _reply({"text": "ok"})
    assert _writable(kept) is kept


def test_a_handlers_exception_is_an_internal_error_not_code_0() -> None:
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError, JSONRPCNotification

    error = ErrorData(code=0, message="boom")
    sdk = SessionMessage(JSONRPCError(jsonrpc="2.0", id=4, error=error))
    message = _writable(sdk).message
    assert (message.id, message.error.code, message.error.message) == (
        4,
        -32603,
        "Internal error: boom",
    )
    note = JSONRPCNotification(
        jsonrpc="2.0", method="notifications/message", params={"x": "\ud800"}
    )
    assert _writable(SessionMessage(note)) is None  # a server note that cannot be written: none


def test_a_wide_line_is_measured_as_a_deep_one_is() -> None:
    """Many brackets side by side are no depth; past MAX_ID_SCAN the id is not read."""
    wide = "[" + "[]," * 400_000 + "[]]"
    assert screen(wide) is None
    deep = '{"id":3,"method":"ping","p":' + "[" * 200 + "[]," * 400_000 + "]" * 201 + "}"
    assert len(deep) > rpclines.MAX_ID_SCAN
    assert screen(deep) == Unread(f"nested deeper than {MAX_DEPTH} levels", None)
