# ruff: noqa: E501
"""Round 57 (runs): an http tool's answer that sends one header field more than once.

docs/execution.md, Tools: an http tool's result is ``{status, headers, json, text}``. HTTP
(RFC 9110 §5.2-5.3) lets a field line repeat; the field's value is then all of them, in
order, joined by commas (``Set-Cookie`` excepted), and field names are case-insensitive.
A result that keeps only one of the lines (the first or the last) drops the rest silently,
the same hole as a JSON member said twice (which the intake refuses,
test_round57_runs_dupkeys.py): the server (whoever answers, a host a placeholder picks)
chooses which line a query reads, and a reader of the recorded answer, a proxy or the
service's own client reads another.

Lab ``hh``: a loopback server (``http.server`` in the test process, one thread) answers
``GET /<tag>`` with ``{"ok": true}`` and the variant's header lines; catalog tool ``web``
(``kind: http``, ``GET http://127.0.0.1:PORT/{tag}``). Action 1 ``web`` declares
``state`` = a query on ``$.headers`` (or a verify reads it), action 2 ``rec`` gets ``v`` =
``state``. Alice approves; one pass.

Asserted: the value a query reads for a repeated field is every line's (``a, b`` joined as
RFC 9110 says, or a list of them), or the answer is refused (E_TOOL_OUTPUT_INVALID), never
one line with the other dropped; a verify ``equals: ok`` does not hold for
``X-State: failed`` + ``X-State: ok``. Controls: a single field line reads as sent; two
distinct fields read apart.

Also ``body-dup``: a JSON body naming ``state`` twice must be E_TOOL_OUTPUT_INVALID.

Result: every variant held: repeated field lines reach the query joined in order
(``failed, ok``; the mixed-case spelling too), so ``equals: ok`` does not hold
(E_VERIFY_FAILED); a body with a member twice is E_TOOL_OUTPUT_INVALID; the controls run.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

# id: (header lines, how action 1 reads them, what rec must get (list of acceptable))
OUT = "    outputs: [{name: v, path: \"$.headers['x-state']\"}]\n"
VERIFY = "    verify: {expect: {path: \"$.headers['x-state']\", equals: ok}}\n"
JOINED = ["failed, ok", ["failed", "ok"]]
VARIANTS: dict[str, tuple[list[tuple[str, str]], str, Any]] = {
    "twice-output": ([("X-State", "failed"), ("X-State", "ok")], OUT, JOINED),
    "twice-mixedcase": ([("X-State", "failed"), ("x-state", "ok")], OUT, JOINED),
    "twice-verify": ([("X-State", "failed"), ("X-State", "ok")], VERIFY, None),
    "thrice": (
        [("X-State", "failed"), ("X-State", "failed"), ("X-State", "ok")],
        OUT,
        ["failed, failed, ok", ["failed", "failed", "ok"]],
    ),
    "body-dup": ([], "    outputs: [{name: v, path: $.json.state}]\n", "invalid"),
    "control-once": ([("X-State", "ok")], OUT, ["ok", ["ok"]]),
    "control-verify": ([("X-State", "ok")], VERIFY, "ran"),
    "control-two-fields": ([("X-State", "ok"), ("X-Other", "failed")], OUT, ["ok", ["ok"]]),
}
IDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        tag = self.path.strip("/").split("?")[0]
        body = (
            b'{"ok": true, "state": "failed", "state": "ok"}'
            if tag == "body-dup"
            else b'{"ok": true}'
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in VARIANTS.get(tag, ([], "", None))[0]:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _plan(vid: str) -> str:
    _, extra, _ = VARIANTS[vid]
    v = "$<actions[1].outputs.v>" if "outputs" in extra else "ran"
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: web}, {name: rec}]\nactions:\n"
        f"  - id: 1\n    tool: web\n    why: w\n    params: {{tag: {vid}}}\n{extra}"
        f'  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {vid}, v: "{v}"}}\n'
    )


def _build(root: Path) -> Lab:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        lab = Lab(
            root / "hh",
            tools=f'web: {{kind: http, method: GET, url: "http://127.0.0.1:{port}/{{tag}}", timeout: 10}}\n',
        )
        for vid in IDS:
            lab.write(vid, _plan(vid))
        lab.commit("plans")
        lab.run()
        for vid in IDS:
            lab.set_status(vid, "approved")
        lab.commit("approve", ALICE)
        lab.run()
    finally:
        server.shutdown()
        server.server_close()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    yield shared(tmp_path_factory, "r57-httpheaders", _build)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_every_field_line_counts(lab: Lab, vid: str) -> None:
    expected = VARIANTS[vid][2]
    calls = lab.calls(vid)
    plan = lab.plan(vid)
    said = json.dumps(plan.get("execution"), default=str)
    if expected is None:  # a verify that must not hold
        assert calls == [], f"the verify held, rec ran: {said[:600]}"
        assert "E_VERIFY_FAILED" in said or "E_TOOL_OUTPUT_INVALID" in said, said[:800]
        return
    if expected == "invalid":  # a JSON body naming a member twice
        assert calls == [], f"rec ran with {calls[0]['stdin']}"
        assert "E_TOOL_OUTPUT_INVALID" in said, said[:800]
        return
    if expected == "ran":
        assert len(calls) == 1, said[:800]
        return
    if not calls and "E_TOOL_OUTPUT_INVALID" in said and "control" not in vid:
        return
    assert len(calls) == 1, said[:800]
    assert json.loads(calls[0]["stdin"])["v"] in expected, calls
