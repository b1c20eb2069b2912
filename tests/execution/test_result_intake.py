"""A tool's result enters the run only as a canonical value (I-JSON, the plan's value tree).

Python's JSON parser accepts ``NaN``, ``Infinity``, ``1e400``, integers of any size and lone
surrogate escapes; none of them is JSON data the journal, the ``execution:`` block, a later
tool or ``plangate validate`` can carry. Every tool kind, check tools and nested plans pass
one intake (:func:`controller.execution.results.take_result`): such a result is
E_TOOL_OUTPUT_INVALID, ``on_failure`` applies, and what the engine wrote still reads.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.errors import PlangateError
from controller.execution.executor import Engine
from controller.execution.results import MAX_RESULT_DEPTH, take_result
from controller.plan import plans, yamlio
from tests.support.executor_kit import PY, execution, journal_records, make_plan, run, statuses

ECHO = {"kind": "echo", "idempotent": True, "risk": "low"}

#: name -> (stdout of the tool, where the intake finds it, what it says).
NOT_IJSON: dict[str, tuple[str, str, str]] = {
    "nan": ('{"v": NaN}', '$["json"]["v"]', "NaN, not a finite number"),
    "infinity": ('{"v": [1, -Infinity]}', '$["json"]["v"][1]', "-Infinity"),
    "overflow": ('{"v": {"w": 1e400}}', '$["json"]["v"]["w"]', "Infinity"),
    "bigint": ('{"v": 9007199254740992}', '$["json"]["v"]', "beyond ±(2^53−1) (16 digits)"),
    "negative-bigint": ("-123456789012345678901", '$["json"]', "beyond ±(2^53−1) (21 digits)"),
    "lone-surrogate": ('{"v": "x\\ud800y"}', '$["json"]["v"]', "lone surrogate U+D800"),
    "lone-low-surrogate": ('["ok", "\\udfff"]', '$["json"][1]', "lone surrogate U+DFFF"),
    "surrogate-key": ('{"a": {"\\udc80": 1}}', '$["json"]["a"]', "key is a string with a lone"),
    "too-deep": (
        "[" * (MAX_RESULT_DEPTH + 5) + "]" * (MAX_RESULT_DEPTH + 5),
        '$["json"][0][0][0]',  # the path is shortened in the message
        "nested deeper than 100 levels",
    ),
}


def printer(text: str, *, exit_code: int = 0) -> dict[str, Any]:
    code = f"import sys; sys.stdout.write({text!r}); sys.exit({exit_code})"
    return {"kind": "exec", "argv": [PY, "-c", code], "idempotent": True, "risk": "low"}


# --- the intake itself ------------------------------------------------------------------


@pytest.mark.parametrize("name", list(NOT_IJSON))
def test_a_value_outside_i_json_is_refused_where_it_is(name: str) -> None:
    stdout, where, what = NOT_IJSON[name]
    result = {"exit_code": 0, "stdout": "", "json": json.loads(stdout)}
    with pytest.raises(PlangateError) as info:
        take_result("src", result)
    assert info.value.code == "E_TOOL_OUTPUT_INVALID" and info.value.permanent
    assert f"src: its result at {where}" in info.value.message
    assert what in info.value.message


@pytest.mark.parametrize(
    "value",
    [(1, 2), {1: "a"}, {"a": {1, 2}}, b"bytes", object()],
    ids=["tuple", "int-key", "set", "bytes", "object"],
)
def test_python_values_that_are_not_json_data_are_refused(value: Any) -> None:
    with pytest.raises(PlangateError) as info:
        take_result("py", value)
    assert info.value.code == "E_TOOL_OUTPUT_INVALID"


def test_numbers_take_the_form_the_hash_gives_them() -> None:
    # the same rule as the plan reader (SPEC §15): integral floats within ±(2^53−1) are ints
    taken = take_result("t", [1.0, -0.0, 1e2, 1.5, 1e20, 9007199254740991.0, 2**53 - 1, True])
    assert taken == [1, 0, 100, 1.5, 1e20, 2**53 - 1, 2**53 - 1, True]
    assert [type(v) for v in taken] == [int, int, int, float, float, int, int, bool]


def test_depth_up_to_the_limit_is_kept() -> None:
    value: Any = "leaf"
    for _ in range(MAX_RESULT_DEPTH):
        value = [value]
    assert take_result("t", value) == value
    with pytest.raises(PlangateError):
        take_result("t", [value])


def test_a_hostile_key_is_named_shortened() -> None:
    with pytest.raises(PlangateError) as info:
        take_result("t", {"k" * 5000: math.nan})
    assert len(info.value.message) < 500 and "\u2026" in info.value.message


#: What Python's json.loads can give: any number (NaN, ±inf, huge ints), any code point.
_ANY_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=8)
_PYTHON_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_ANY_TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_PYTHON_JSON)
def test_whatever_is_taken_in_is_json_the_plan_reader_accepts(value: Any) -> None:
    try:
        taken = take_result("t", value)
    except PlangateError as error:
        assert error.code == "E_TOOL_OUTPUT_INVALID"
        json.dumps(error.message, ensure_ascii=False).encode("utf-8")  # a message that records
        return
    json.dumps(taken, allow_nan=False, ensure_ascii=False).encode("utf-8")
    assert plans.non_json_problems({"v": taken}) == []
    # the controller's execution: block is written with yamlio.dump and must read back as is
    assert yamlio.read_yaml(yamlio.dump({"v": taken})).data == {"v": taken}


# --- every kind, in a run ---------------------------------------------------------------


@pytest.mark.parametrize("name", list(NOT_IJSON))
def test_an_exec_result_outside_i_json_fails_the_action_and_on_failure_applies(
    tmp_path: Path, name: str
) -> None:
    stdout, where, _ = NOT_IJSON[name]
    actions = [
        {"id": 1, "tool": "src", "on_failure": "skip", "outputs": [{"name": "v", "path": "$"}]},
        {"id": 2, "tool": "say", "params": {"n": 1}},
    ]
    config, plan_file = make_plan(tmp_path, actions, {"src": printer(stdout), "say": ECHO})
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "completed"
    assert statuses(plan_file) == ["skipped", "succeeded"]
    first = execution(plan_file)["actions"][0]
    assert first["error"]["code"] == "E_TOOL_OUTPUT_INVALID" and where in first["error"]["message"]
    assert first["outputs"] == {}
    loaded = plans.load_plan(plan_file, config)  # the file the controller wrote still reads
    assert loaded.valid and loaded.hash == loaded.frozen_hash, loaded.problems
    (end, _) = [r for r in journal_records(config, plan_file) if r["t"] == "end"]
    assert end["result"] is None


def test_a_failing_tool_keeps_its_error_and_leaves_no_unusable_result(tmp_path: Path) -> None:
    config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "src"}], {"src": printer('{"v": NaN}', exit_code=3)}
    )
    outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_TOOL_FAILED"
    assert "exited with status 3" in outcome.error.message
    assert "E_TOOL_OUTPUT_INVALID" not in outcome.error.message  # its own code stays
    assert "not a finite number" in outcome.error.message
    (end,) = [r for r in journal_records(config, plan_file) if r["t"] == "end"]
    assert end["result"] is None
    assert plans.load_plan(plan_file, config).valid


def test_a_python_tool_result_beyond_2_53_is_refused(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "bigtools.py").write_text("def big():\n    return {'id': 2**64}\n")
    config, plan_file = make_plan(
        tmp_path,
        [{"id": 1, "tool": "big"}],
        {"big": {"kind": "python", "target": "bigtools:big"}},
        extra_config={"python_path": [str(lib)]},
    )
    outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_TOOL_OUTPUT_INVALID"
    assert '$["id"]' in outcome.error.message
    assert plans.load_plan(plan_file, config).valid


class _NanServer(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        data = b'{"v": NaN}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def nan_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NanServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_an_http_result_outside_i_json_is_refused(tmp_path: Path, nan_url: str) -> None:
    tools = {"hook": {"kind": "http", "method": "POST", "url": nan_url}}
    config, plan_file = make_plan(tmp_path, [{"id": 1, "tool": "hook"}], tools)
    outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_TOOL_OUTPUT_INVALID"
    assert '$["json"]["v"]' in outcome.error.message


def test_a_check_tool_result_outside_i_json_fails_the_check(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    action = {
        "id": 1,
        "tool": "add",
        "params": {"line": "x"},
        "preconditions": [{"tool": "probe", "expect": {"path": "$.json.v", "equals": 1}}],
    }
    add = printer("{}")
    add["argv"][2] = f"open({str(effects)!r}, 'a').write('x')"
    config, plan_file = make_plan(
        tmp_path, [action], {"add": add, "probe": printer('{"v": Infinity}')}
    )
    outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_PRECONDITION_FAILED"
    assert "E_TOOL_OUTPUT_INVALID" in outcome.error.message
    assert not effects.exists()  # the action's tool never ran
    assert plans.load_plan(plan_file, config).valid


def test_a_verify_tool_result_outside_i_json_fails_the_verify(tmp_path: Path) -> None:
    action = {
        "id": 1,
        "tool": "deploy",
        "verify": {
            "tool": "status",
            "expect": {"path": "$.json.v", "equals": 1},
            "timeout": 0.05,
            "interval": 0.01,
        },
    }
    tools = {"deploy": ECHO, "status": printer('{"v": 1e400}')}
    config, plan_file = make_plan(tmp_path, [action], tools)
    outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_VERIFY_FAILED"
    assert "E_TOOL_OUTPUT_INVALID" in outcome.error.message
    assert plans.load_plan(plan_file, config).valid


@pytest.mark.parametrize(
    ("output", "why"),
    [
        (b'{"id": 9007199254740993.0}', "9007199254740993.0"),
        (b'{"v": 4.99999999999999999999}', "no double holds"),
        (b'{"v": 1e-400}', "1e-400"),
        (b'{"n": ' + b"9" * 5000 + b"}", "a number too long"),
        (b"[" * 20000 + b"]" * 20000, "nested too deep"),
    ],
)
def test_tool_json_read_inexactly_is_refused(output: bytes, why: str) -> None:
    """Round 24: a number no double holds as written reached the next tool as another
    number, and JSON past Python's limits (a 5,000-digit integer, nesting past its recursion
    limit) was read as "not JSON" and handed on as text."""
    from controller.execution.tools import strict_json

    with pytest.raises(PlangateError) as raised:
        strict_json(output)
    assert raised.value.code == "E_TOOL_OUTPUT_INVALID" and why in raised.value.message


def test_tool_numbers_a_double_holds_are_read() -> None:
    from controller.execution.tools import strict_json

    assert strict_json(b'{"a": 0.1, "b": 2.50, "c": 1e3, "d": -0.0}') == {
        "a": 0.1, "b": 2.5, "c": 1000.0, "d": -0.0,
    }  # fmt: skip
    assert strict_json(b"plain text, not JSON") is None


@pytest.mark.parametrize(
    "output",
    [
        '{"v": 1}'.encode("utf-16"),  # json.loads(bytes) guesses UTF-16 and UTF-32
        '{"v": 1}'.encode("utf-32-le"),
        b'{"v": "\xff"}',  # not UTF-8 (was refused as "a number too long")
        b'{"v": "\xed\xa0\x80"}',  # an encoded surrogate (json.loads passed it through)
    ],
)
def test_tool_output_is_json_only_as_utf_8(output: bytes, tmp_path: Path) -> None:
    """A tool's output is read as JSON only when it is UTF-8, as its recorded text is read:
    bytes the text shows as replacement characters never fill a later action's params."""
    from controller.execution.tools import strict_json

    assert strict_json(output) is None
    code = f"import sys; sys.stdout.buffer.write({output!r})"
    tool = {"kind": "exec", "argv": [PY, "-c", code], "idempotent": True, "risk": "low"}
    actions = [{"id": 1, "tool": "src", "outputs": [{"name": "v", "path": "$.json.v"}]}]
    config, plan_file = make_plan(tmp_path, actions, {"src": tool})
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed"
    assert outcome.error is not None and outcome.error.code == "E_OUTPUT_MISSING"
    assert execution(plan_file)["actions"][0]["outputs"] == {}


def test_a_utf_8_byte_order_mark_is_ignored() -> None:
    """RFC 8259 §8.1: a parser may ignore a leading byte order mark (some Windows tools write
    one)."""
    from controller.execution.tools import strict_json

    assert strict_json(b'\xef\xbb\xbf{"v": 1}') == {"v": 1}


def test_outputs_that_repeat_a_nested_result_are_refused() -> None:
    """``..*`` over a deeply nested result selects every level with everything under it:
    the outputs would hold the result about once per level (round 37). Past the limit the
    action fails E_LIMIT_EXCEEDED instead of journaling megabytes."""
    from controller.errors import LimitExceeded
    from controller.execution.results import extract_outputs
    from controller.plan.schema import Output

    nested: object = "y" * 20_000
    for _ in range(60):
        nested = {"a": nested}
    outputs = [Output(name="all", path="$..*")]
    with pytest.raises(LimitExceeded) as caught:
        extract_outputs(outputs, nested, limit=100_000)
    assert caught.value.code == "E_LIMIT_EXCEEDED"
    assert extract_outputs([Output(name="one", path="$.a.a")], nested, limit=100_000)
