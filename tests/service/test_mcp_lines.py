"""`plangate mcp` against lines no reader of the chain can take (round 125,
mcp-deep-line-kills-session): the real server process, fed raw JSON-RPC lines as
``printf ... | plangate mcp`` does. One line nested 1,000 levels deep ended the session
(``RecursionError`` in the server's read of it), the requests before and after it
unanswered; a line past plangate's bounds is ``-32700`` saying why, and the session goes on
(docs/agents.md, "The session")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.service.test_mcp import PLAN, _piped, write_config
from tests.support.gitenv import git


def _nest(n: int) -> str:
    return "[" * n + "]" * n


def _call(rid: Any, name: str, arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


DEEP = "Parse error: nested deeper than 128 levels"
LONG = "Parse error: a number longer than 1000 characters"
BIG = "1" + "0" * 5000


@pytest.mark.parametrize(
    ("line", "answer_id", "message"),
    [
        (_nest(1000), None, DEEP),
        (_nest(5000), None, DEEP),
        ('{"a":' * 3000 + "1" + "}" * 3000, None, DEEP),
        (
            '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"validate",'
            f'"arguments":{{"plan":"x","extra":{_nest(5000)}}}}}}}',
            5,
            DEEP,
        ),
        (  # the id after the deep part is read too
            f'{{"jsonrpc":"2.0","method":"ping","params":{{"a":{_nest(3000)}}},"id":"p-1"}}',
            "p-1",
            DEEP,
        ),
        (  # an id that is itself the deep part cannot be told: null
            f'{{"jsonrpc":"2.0","id":{_nest(3000)},"method":"tools/call",'
            '"params":{"name":"status","arguments":{}}}',
            None,
            DEEP,
        ),
        (f'{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"a":{BIG}}}}}', 7, LONG),
        (f'{{"jsonrpc":"2.0","id":{BIG},"method":"ping"}}', None, LONG),
        (BIG, None, LONG),
    ],
    ids=[
        "array-1000",
        "array-5000",
        "object-3000",
        "args-5000",
        "id-after",
        "id-deep",
        "number-param",
        "number-id",
        "number-bare",
    ],
)
def test_a_line_past_the_bounds_is_a_parse_error_saying_why_and_the_session_goes_on(
    repo: Path, tmp_path: Path, line: str, answer_id: Any, message: str
) -> None:
    """The submit before the line is answered and committed, the line gets -32700 saying
    why (with the request's id when it shows one), the status after it is answered; the
    server exits 0 with no traceback."""
    config = write_config(tmp_path, repo)
    before = git(repo, "rev-parse", "HEAD").strip()
    code, replies, err = _piped(
        config,
        tmp_path,
        [_call(1, "submit", {"plan": PLAN, "slug": "before"}), line, _call(99, "status", {})],
    )
    assert code == 0 and "Traceback" not in err and "internal error" not in err, err
    by_id = {reply["id"]: reply for reply in replies if reply["id"] in (1, 99)}
    assert by_id[1]["result"]["isError"] is False, by_id[1]
    assert by_id[99]["result"]["isError"] is False, by_id[99]  # (concurrent with the submit)
    refused = [reply for reply in replies if reply["id"] not in (1, 99) or "error" in reply]
    error = {"code": -32700, "message": message}
    assert refused == [{"jsonrpc": "2.0", "id": answer_id, "error": error}], replies
    assert len(replies) == 3, replies
    assert git(repo, "rev-list", "--count", f"{before}..main").strip() == "1"


def test_a_line_within_the_bounds_is_read_as_before(repo: Path, tmp_path: Path) -> None:
    """128 levels (the bound) reach the SDK: a bare array is JSON but no message (-32600),
    a ping whose params hold 120 levels is answered; a number of 1,000 characters is a
    number (a wait's timeout: read, not a parse error)."""
    config = write_config(tmp_path, repo)
    code, replies, err = _piped(
        config,
        tmp_path,
        [
            _nest(128),
            f'{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"a":{_nest(120)}}}}}',
            f'{{"jsonrpc":"2.0","id":4,"method":"ping","params":{{"a":{_nest(130)}}}}}',
            '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait",'
            f'"arguments":{{"path":"plans/none","timeout":0.{"0" * 997}1}}}}}}',
        ],
    )
    assert code == 0, err
    assert replies[0] == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request"},
    }, replies
    by_id = {reply["id"]: reply for reply in replies[1:]}
    assert by_id[3] == {"jsonrpc": "2.0", "id": 3, "result": {}}, by_id
    assert by_id[4]["error"] == {"code": -32700, "message": DEEP}, by_id
    assert "result" in by_id[5], by_id[5]  # the call ran: its own answer, no parse error
    assert len(replies) == 4, replies


def test_a_line_past_the_length_bound_is_never_held_and_the_session_goes_on(
    repo: Path, tmp_path: Path
) -> None:
    """A line longer than the bound (25,231,360 characters) is read to its end and dropped:
    -32700 saying why, id null; the line after it is read from its own start."""
    config = write_config(tmp_path, repo)
    plan = "x" * 25_300_000
    line = json.dumps(_call(5, "validate", {"plan": plan}))
    code, replies, err = _piped(config, tmp_path, [line, _call(99, "status", {})])
    assert code == 0, err
    message = "Parse error: a line longer than 25231360 characters"
    assert replies[0] == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": message},
    }
    assert replies[1]["id"] == 99 and replies[1]["result"]["isError"] is False, replies[1]
    assert len(replies) == 2, replies
