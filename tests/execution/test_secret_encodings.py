"""Secrets never leak in an encoded form (SPEC §6; issue 11).

A tool or an error message may carry a secret URL-encoded, as ``\\u`` escapes, with escaped
quotes, base64-, base32- or hex-encoded (of its UTF-8 or UTF-16 bytes, at any alignment), as
UTF-16 text (a NUL between its characters), or cut in the middle by a shortened message. Each
form is tested on the redactor and, end to end, through the engine with real exec tools:
nothing written (journal, PLAN.yml, EXECUTION_LOG.md, structured logs) holds the secret in any
form.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
import structlog

from controller.execution.executor import Engine
from controller.execution.secrets import Redactor
from tests.support.executor_kit import PY, journal_records, make_plan, run

SECRET = "tok'en\"/r\u00e9d+42 x"


def every_char_escaped(value: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in value)


FORMS = {
    "raw": SECRET,
    "json": json.dumps(SECRET),
    "json-unicode": json.dumps(SECRET, ensure_ascii=False),
    "json-in-json": json.dumps(json.dumps(SECRET)),
    "every-char-u-escaped": every_char_escaped(SECRET),
    "upper-hex-u-escapes": every_char_escaped(SECRET).upper().replace("\\U", "\\u"),
    "python-repr": repr(SECRET),
    "repr-of-repr": repr(repr(SECRET)),
    "url": quote(SECRET, safe=""),
    "url-lower-hex": quote(SECRET, safe="").lower().replace("tok", "tok"),
    "url-keep-slash": quote(SECRET),
    "url-plus": quote_plus(SECRET),
    "url-twice": quote(quote(SECRET, safe=""), safe=""),
    "html-entities": "".join(f"&#{ord(c)};" for c in SECRET),
    "base64": base64.b64encode(SECRET.encode()).decode(),
    "base64-shifted": base64.b64encode(b"Authorization: Basic " + SECRET.encode()).decode(),
    "base64-url": base64.urlsafe_b64encode(b"xy" + SECRET.encode()).decode(),
    "hex": SECRET.encode().hex(),
    # whole-form (block) encodings at every alignment, of UTF-8 and of UTF-16 bytes
    "hex-upper-shifted": (b"z" + SECRET.encode()).hex().upper(),
    "base32": base64.b32encode(SECRET.encode()).decode(),
    "base32-shift-1": base64.b32encode(b"u" + SECRET.encode()).decode(),
    "base32-shift-2": base64.b32encode(b"u:" + SECRET.encode()).decode(),
    "base32-shift-3": base64.b32encode(b"us:" + SECRET.encode()).decode(),
    "base32-shift-4-lower": base64.b32encode(b"use:" + SECRET.encode()).decode().lower(),
    "base64-utf16le": base64.b64encode(SECRET.encode("utf-16-le")).decode(),
    "base64-utf16be-shifted": base64.b64encode(b"x" + SECRET.encode("utf-16-be")).decode(),
    "hex-utf16le": SECRET.encode("utf-16-le").hex(),
    "base32-utf16le": base64.b32encode(b"ab" + SECRET.encode("utf-16-le")).decode(),
    # interleaved: UTF-16/32 text read as UTF-8 (a NUL between characters), raw or escaped
    "utf16le-text": "\0".join(SECRET) + "\0",
    "utf16be-text": "\0" + "\0".join(SECRET),
    "utf32le-text": "\0\0\0".join(SECRET),
    "utf16-text-in-json": json.dumps("\0".join(SECRET)),
    "utf16-text-in-repr": repr("\0".join(SECRET)),
    "utf16-text-url": quote("\0".join(SECRET), safe=""),
}


def plain_parts(text: str) -> list[str]:
    """Pieces of the secret long enough to mean something (>= 4 characters)."""
    return [text[i : i + 4] for i in range(len(text) - 3)]


@pytest.mark.parametrize("form", list(FORMS))
def test_every_encoding_of_a_secret_is_hidden(form: str) -> None:
    encoded = FORMS[form]
    out = Redactor([SECRET]).text(f"error: GET /x?t={encoded}&y=1 failed")
    assert "***" in out
    assert encoded not in out
    for piece in ("tok'e", "r\u00e9d", "d+42", "%C3%A9", "\\u00e9"):
        assert piece not in out, f"{piece!r} of the secret survived in {out!r}"


def test_text_around_a_secret_stays_as_written() -> None:
    redactor = Redactor(["hunter2-SECRET"])
    text = 'Loading... {"a": "b\\n"} 100% & more + "quoted" \u2026'
    assert redactor.text(text) == text


@pytest.mark.parametrize("mark", ["\u2026", "...", "\n[plangate: output cut at 9 bytes]"])
@pytest.mark.parametrize("kept", [3, 8, len(SECRET) - 1])
def test_a_secret_cut_by_a_shortened_message_has_its_start_hidden(mark: str, kept: int) -> None:
    out = Redactor([SECRET]).text(f"exited with status 1: token={SECRET[:kept]}{mark}")
    assert out == f"exited with status 1: token=***{mark}"


def test_two_characters_before_an_ellipsis_are_not_taken_for_a_secret() -> None:
    assert Redactor([SECRET]).text("to...") == "to..."


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_SECRET_TOKEN", SECRET)


def _tool(code: str) -> dict[str, object]:
    """An exec tool running ``code`` with ``t`` (the secret) read from its JSON stdin."""
    prelude = "import sys, json, base64, urllib.parse as up; t = json.load(sys.stdin)['t']; "
    return {"kind": "exec", "argv": [PY, "-c", prelude + code]}


TOOLS = {
    # \u escapes of every character in a tool's JSON output
    "escapes": _tool("print('{\"t\": \"' + ''.join('\\\\u%04x' % ord(c) for c in t) + '\"}')"),
    "url": _tool("print(json.dumps({'url': 'https://h/?t=' + up.quote(t, safe='')}))"),
    "basic": _tool("print(json.dumps({'h': base64.b64encode(b'u:' + t.encode()).decode()}))"),
    # an error whose last stderr line is cut at 300 characters right inside the secret
    "fails-long": _tool("sys.exit('x' * 290 + ' GET ' + up.quote(t, safe='') + ' ' + t)"),
    "fails-url": _tool("sys.exit('GET https://h/?token=' + up.quote(t, safe='') + ' 401')"),
}


def test_no_encoded_form_of_a_secret_is_written(tmp_path: Path, secret_env: None) -> None:
    actions = [
        {"id": i, "tool": name, "params": {"t": "$<secrets.TOKEN>"}, "on_failure": "skip"}
        for i, name in enumerate(TOOLS, start=1)
    ]
    actions.append(
        {
            "id": len(actions) + 1,
            "tool": "checked",
            "params": {"t": "$<secrets.TOKEN>"},
            "on_failure": "skip",
        }
    )
    # a schema error quotes the resolved value with escaped quotes (Python repr)
    tools = {
        **TOOLS,
        "checked": {
            "kind": "echo",
            "params_schema": {
                "type": "object",
                "properties": {"t": {"type": "string", "pattern": "^[a-z]+$"}},
            },
        },
    }
    config, plan_file = make_plan(tmp_path, actions, tools)
    with structlog.testing.capture_logs() as logs:
        outcome = run(Engine(config), plan_file)
    assert outcome.status == "completed", outcome.error
    records = journal_records(config, plan_file)
    ends = {r["id"]: r for r in records if r["t"] == "end"}
    assert ends[1]["status"] == "succeeded" and ends[1]["result"]["json"] == {"t": "***"}
    assert ends[4]["error"]["code"] == "E_TOOL_FAILED" and ends[4]["error"]["message"].endswith(
        "***\u2026"
    )
    assert ends[6]["error"]["code"] == "E_PARAMS_INVALID"
    written = [plan_file.read_text(), (plan_file.parent / "EXECUTION_LOG.md").read_text()]
    written += [p.read_text() for p in (tmp_path / "state").rglob("*.jsonl")]
    written.append(json.dumps(logs, default=str))
    written.append(json.dumps(records))
    for text in written:
        for form, encoded in FORMS.items():
            assert encoded not in text, f"the secret was written {form}"
        for piece in ("r\u00e9d+42", "r%C3%A9d", "r\\u00e9d", "\\u0072\\u00e9"):
            assert piece not in text


def test_an_encoding_of_something_else_stays_as_written() -> None:
    # the block forms are of the secret's bytes alone: other data in the same encoding stays
    redactor = Redactor([SECRET])
    for text in (
        base64.b32encode(b"an ordinary value, not a secret").decode(),
        base64.b64encode("an ordinary value".encode("utf-16-le")).decode(),
        "\0".join("an ordinary value"),
    ):
        assert redactor.text(text) == text


WIDE = {
    "base32": "print(json.dumps({'h': base64.b32encode(b'xy' + t.encode()).decode()}))",
    "base32-lower": "print(base64.b32encode(b'abc' + t.encode()).decode().lower())",
    "utf16-out": "sys.stdout.buffer.write(('token=' + t + '\\n').encode('utf-16-le'))",
    "utf16-err": "sys.stderr.buffer.write(('token=' + t).encode('utf-16-be')); sys.exit(1)",
    "b64-utf16": "print(base64.b64encode(('-c ' + t).encode('utf-16-le')).decode())",
}


def test_no_whole_or_interleaved_form_of_a_secret_is_written(
    tmp_path: Path, secret_env: None
) -> None:
    actions = [
        {"id": i, "tool": name, "params": {"t": "$<secrets.TOKEN>"}, "on_failure": "skip"}
        for i, name in enumerate(WIDE, start=1)
    ]
    tools = {name: _tool(code) for name, code in WIDE.items()}
    config, plan_file = make_plan(tmp_path, actions, tools)
    with structlog.testing.capture_logs() as logs:
        assert run(Engine(config), plan_file).status == "completed"
    records = journal_records(config, plan_file)
    written = [plan_file.read_text(), (plan_file.parent / "EXECUTION_LOG.md").read_text()]
    written += [p.read_text() for p in (tmp_path / "state").rglob("*.jsonl")]
    written += [json.dumps(logs, default=str), json.dumps(records, ensure_ascii=False)]
    ascii_part = "tok'en"  # the secret's first characters, as UTF-16 keeps them
    for text in written:
        for form, encoded in FORMS.items():
            assert encoded not in text, f"the secret was written {form}"
        for sep in ("\0", "\\u0000", "\\x00"):
            assert sep.join(ascii_part) not in text, f"UTF-16 text with {sep!r} was written"
