# ruff: noqa: E501
"""Round 24, an http tool's URL placeholder filled with an empty string from a tool output.

docs/configuration.md: "``{param}`` placeholders in the URL are URL-encoded, ``.`` too: a
value stays one path segment (a filled URL with a ``.`` or ``..`` segment is
``E_PARAMS_INVALID``)" (round 14 fixed ``.``: "the placeholder's segment vanishes").

A local server records every request. Action 1 (``src``, an exec tool: outside data) prints
``{"c": <value>}``; action 2 calls the http tool with ``c: $<actions[1].outputs.c>``.

- ``empty-mid``: ``POST /hooks/{c}/post`` with ``c = ""``. BROKE: the request goes to
  ``/hooks//post`` (an empty segment, which nginx's default ``merge_slashes`` and many
  routers read as ``/hooks/post``: the placeholder's segment vanishes, as with ``.``).
- ``empty-end``: ``POST /items/{c}`` with ``c = ""``. BROKE: the request goes to
  ``/items/``, the collection, not one item: a tool output picked another endpoint.
- ``plain`` (control): ``c = "a1"`` goes to ``/hooks/a1/post``. Held.

Asserted: either the action is refused (``E_PARAMS_INVALID``) and nothing is sent, or the
request's path has the template's shape with a non-empty segment where the placeholder is.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

VARIANTS = {
    "empty-mid": ("mid", "", "/hooks/{}/post"),
    "empty-end": ("end", "", "/items/{}"),
    "plain": ("mid", "a1", "/hooks/{}/post"),
}
#: What round 24 found (fixed: refused with their E_ codes; the reasons kept as the record).
FOUND = {
    "empty-mid": "round 24: an empty placeholder value leaves an empty path segment (//): the placeholder's segment vanishes",
    "empty-end": "round 24: an empty placeholder value turns /items/{c} into /items/ (the collection)",
}
BROKEN: dict[str, str] = {}


def _build(root: Path) -> Lab:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0)).decode()
            seen.append(json.dumps({"path": self.path, "body": body}))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"ok": true}')

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tools = (
        f'mid: {{kind: http, method: POST, url: "http://127.0.0.1:{port}/hooks/{{c}}/post", timeout: 10}}\n'
        f'end: {{kind: http, method: POST, url: "http://127.0.0.1:{port}/items/{{c}}", timeout: 10}}\n'
    )
    for vid, (_, value, _) in VARIANTS.items():
        (root / f"src-{vid}.py").write_text(
            f"import sys, json\nsys.stdin.read()\nprint(json.dumps({{'c': {value!r}}}))\n"
        )
        tools += f"src-{vid}: {{kind: exec, argv: {json.dumps([sys.executable, str(root / f'src-{vid}.py')])}, timeout: 10}}\n"
    lab = Lab(root, tools=tools)
    for vid, (tool, _, _) in VARIANTS.items():
        lab.write(
            vid,
            f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: src-{vid}}}, {{name: {tool}}}]
actions:
  - {{id: 1, tool: src-{vid}, why: w, params: {{}}, outputs: [{{name: c, path: "$.json.c"}}]}}
  - {{id: 2, tool: {tool}, why: w, params: {{v: "{vid}", c: "$<actions[1].outputs.c>"}}}}
""",
        )
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    server.shutdown()
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r24-httpempty", _build)


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            v,
            id=v,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=BROKEN[v])]
            if v in BROKEN
            else [],
        )
        for v in VARIANTS
    ],
)
def test_placeholder_stays_one_segment(lab: Lab, vid: str) -> None:
    _, value, shape = VARIANTS[vid]
    sent = [json.loads(s) for s in lab.seen]  # type: ignore[attr-defined]
    mine = [s["path"] for s in sent if json.loads(s["body"] or "{}").get("v") == vid]
    if not mine:
        assert "E_PARAMS_INVALID" in lab.codes(vid), lab.codes(vid)[:800]
        return
    assert len(mine) == 1, mine
    prefix, suffix = shape.split("{}")
    path = mine[0]
    assert path.startswith(prefix) and path.endswith(suffix), path
    segment = path[len(prefix) : len(path) - len(suffix)]
    assert segment != "" and "/" not in segment, f"request went to {path!r}"
    assert segment == value
