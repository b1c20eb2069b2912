# ruff: noqa: E501
"""Round 55 (runs): tool outputs filling an http tool's URL on a real loopback server.
docs/execution.md: ``{param}`` placeholders are URL-encoded ("a value stays one path
segment"), a GET sends the other params as the query "each as its text"; round 14 refused
dot segments, round 47 bad host labels. Nobody handed an output to a placeholder holding
the URL's own delimiters (``/ ? # & = : @``, CR LF, pre-encoded ``%2e``) nor to a
placeholder in the host, where ``:PORT`` or ``@`` would send the call elsewhere.

Lab ``uf``: a loopback server (``main``) recording each request's raw target and headers,
and a second one (``canary``) that must never be reached. Catalog: ``getq`` (GET
``/q``), ``item`` (POST ``/items/{id}/x``), ``host`` (GET ``http://127.0.0.{h}:MAIN/h``).
Per variant action 1 ``echo`` hands the value back, action 2 calls the tool with it
(``$<actions[1].outputs.v>``). Alice approves all; one pass. Asserted: the query decodes to
exactly ``{tag, v}`` with ``v`` the value and no injected header (``q-*``); the path has its
three segments with the value, decoded, as the middle one and no query (``p-*``), or the
call was refused E_PARAMS_INVALID; the canary got nothing and a ``host`` call reached main
only with the host the value spells as one label (``h-*``).

Result: all held (see the ids).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

# id: (tool, param, value)
VARIANTS: dict[str, tuple[str, str, str]] = {
    "q-amp": ("getq", "v", "1&admin=true"),
    "q-hash": ("getq", "v", "1#frag"),
    "q-crlf": ("getq", "v", "1\r\nX-Evil: 1"),
    "q-plus": ("getq", "v", "a+b c"),
    "p-slash": ("item", "id", "a/b"),
    "p-query": ("item", "id", "a?admin=1"),
    "p-hash": ("item", "id", "a#b"),
    "p-pct": ("item", "id", "%2e%2e"),
    "p-crlf": ("item", "id", "a\r\nX-Evil: 1"),
    "p-back": ("item", "id", "..\\admin"),
    "h-port": ("host", "h", "1:{canary}"),
    "h-path": ("host", "h", "1:{canary}/h?"),
    "h-at": ("host", "h", "1:{main}@127.0.0.1:{canary}"),
    "h-ok": ("host", "h", "1"),
}
VIDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}


def _server(seen: list[dict[str, Any]]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, body: bytes) -> None:
            seen.append(
                {
                    "target": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body.decode("utf-8", "replace"),
                }
            )
            out = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def do_GET(self) -> None:
            self._answer(b"")

        def do_POST(self) -> None:
            self._answer(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def _build(root: Path) -> Lab:
    main_seen: list[dict[str, Any]] = []
    canary_seen: list[dict[str, Any]] = []
    main, canary = _server(main_seen), _server(canary_seen)
    ports = {"main": main.server_address[1], "canary": canary.server_address[1]}
    for s in (main, canary):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    m = ports["main"]
    tools = (
        f"getq: {{kind: http, method: GET, url: 'http://127.0.0.1:{m}/q', timeout: 3}}\n"
        f"item: {{kind: http, method: POST, url: 'http://127.0.0.1:{m}/items/{{id}}/x', timeout: 3}}\n"
        f"host: {{kind: http, method: GET, url: 'http://127.0.0.{{h}}:{m}/h', timeout: 3}}\n"
    )
    lab = Lab(root / "uf", tools=tools)
    lab.ports = ports  # type: ignore[attr-defined]
    try:
        for vid, (tool, param, value) in VARIANTS.items():
            value = value.format(**ports)
            lab.write(
                vid,
                f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
                f"available_tools: [{{name: echo}}, {{name: {tool}}}]\nactions:\n"
                f"  - id: 1\n    tool: echo\n    why: w\n    params: {{v: {json.dumps(value)}}}\n    outputs: [{{name: v, path: $.v}}]\n"
                f'  - id: 2\n    tool: {tool}\n    why: w\n    params: {{tag: {vid}, {param}: "$<actions[1].outputs.v>"}}\n',
            )
        lab.commit("plans")
        lab.run()
        for vid in VIDS:
            lab.set_status(vid, "approved")
        lab.commit("approve", ALICE)
        lab.run(timeout=240)
        time.sleep(0.2)
    finally:
        for s in (main, canary):
            s.shutdown()
            s.server_close()
    lab.main_seen = main_seen  # type: ignore[attr-defined]
    lab.canary_seen = canary_seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-urlfill", _build)


def _mine(rows: list[dict[str, Any]], vid: str) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        query = parse_qs(urlsplit(r["target"]).query, keep_blank_values=True)
        body = {}
        if r["body"].strip():
            body = json.loads(r["body"])
        if query.get("tag") == [vid] or body.get("tag") == vid:
            out.append(r)
    return out


def test_the_canary_got_nothing(lab: Lab) -> None:
    assert lab.canary_seen == [], lab.canary_seen  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_value_stays_in_its_place(lab: Lab, vid: str) -> None:
    tool, _param, value = VARIANTS[vid]
    value = value.format(**lab.ports)  # type: ignore[attr-defined]
    seen = _mine(lab.main_seen, vid)  # type: ignore[attr-defined]
    canary = _mine(lab.canary_seen, vid)  # type: ignore[attr-defined]
    assert canary == [], canary
    text = lab.codes(vid)
    for r in seen:
        assert "x-evil" not in r["headers"], r
    if tool == "getq":
        assert len(seen) == 1, text[:800]
        query = parse_qs(urlsplit(seen[0]["target"]).query, keep_blank_values=True)
        assert query == {"tag": [vid], "v": [value]}, seen[0]["target"]
    elif tool == "item":
        if not seen:
            assert "E_PARAMS_INVALID" in text, text[:800]
            return
        assert len(seen) == 1, seen
        split = urlsplit(seen[0]["target"])
        parts = split.path.split("/")
        assert not split.query and len(parts) == 4, seen[0]["target"]
        assert parts[1] == "items" and parts[3] == "x" and unquote(parts[2]) == value, seen[0][
            "target"
        ]
    else:
        if vid == "h-ok":
            assert len(seen) == 1 and seen[0]["headers"]["host"].startswith("127.0.0.1:"), seen
        else:
            assert seen == [], seen
            assert "E_PARAMS_INVALID" in text or "E_TOOL_FAILED" in text, text[:800]
