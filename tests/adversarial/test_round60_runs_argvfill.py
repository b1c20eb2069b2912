"""Round 60 (runs): an exec tool's argv placeholders filled with placeholder text.

The attack: docs/execution.md: "``argv`` from the catalog, ``{param}`` filled per element"
and plan-format.md: "a resolved value is data and is never scanned again". An argv element
with two placeholders (``--a={a}:{b}``) filled one placeholder after the other (a
``str.replace`` loop, or ``str.format``) reads a value that holds placeholder text as a
placeholder: a tool output ``{b}`` in ``a`` would become ``b``'s value, ``{{b}}`` would lose
a brace, ``{b!r}`` or ``{b[0]}`` would run format's own mini-language. Nobody has handed an
output holding the catalog's own placeholder syntax to a multi-placeholder element.

Lab ``af`` (local mode): catalog ``pair`` (exec: the recorder with argv
``[<tag>, "--a={a}:{b}", "{b}"]``). Per variant, action 1 ``echo`` hands the value back
(output ``o``, ``$.v``), action 2 ``pair`` gets ``a: $<actions[1].outputs.o>``, ``b: B``
(``rev``: ``a: A`` and ``b`` the output; ``lit-*``: the value written in the plan). Alice
approves all; one pass.

GET params no placeholder takes become the query "each as its text": plan-written param
KEYS holding ``&``, ``=``, ``#``, ``+``/blank or ``%26`` (``k-*``) must stay one query key.

The same over http (``hpair``: POST ``/p/{a}/{b}``; ``hget``: GET ``/g/{a}``, ``b`` in the
query) against a real loopback server recording each request (``h-*``, ``g-*``).

Asserted: the tool's argv is exactly the elements with each placeholder replaced once by
its value as text (``--a=<a>:<b>``, ``<b>``), whatever the value holds; over http, the path
segments decode to exactly ``a`` and ``b`` (and the GET's query ``b`` to ``b``).

Broke: none. Held: all 14 (each placeholder filled once, the value never read again:
``cross``, ``self``, ``tag``, ``brace2``, ``fmt-conv``, ``fmt-index``, ``fmt-spec``,
``printf``, ``dollar``, ``rev``, ``both``, ``lit-cross``, ``open-brace`` and ``plain``), and
all 8 over http (``h-cross``, ``h-self``, ``h-brace2``, ``h-fmt``, ``h-rev``, ``h-pct``:
``%7Bb%7D`` sent encoded again, ``g-cross``, ``h-plain``), and the 5 query keys (``k-amp``,
``k-eq``, ``k-hash``, ``k-plus``, ``k-pct``: each sent encoded, one key).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

# id: (a, b, a from the output?, b from the output?)
VARIANTS: dict[str, tuple[str, str, bool, bool]] = {
    "plain": ("x", "B", True, False),
    "cross": ("{b}", "B", True, False),
    "self": ("{a}", "B", True, False),
    "tag": ("{tag}", "B", True, False),
    "brace2": ("{{b}}", "B", True, False),
    "fmt-conv": ("{b!r}", "B", True, False),
    "fmt-index": ("{b[0]}", "B", True, False),
    "fmt-spec": ("{b:>9}", "B", True, False),
    "printf": ("%(b)s", "B", True, False),
    "dollar": ("${b}", "B", True, False),
    "rev": ("A", "{a}", False, True),
    "both": ("{b}", "{a}", True, True),
    "lit-cross": ("{b}", "B", False, False),
    "open-brace": ("{", "}", True, True),
}


# http: id -> (tool, a, b, a from the output?, b from the output?)
HTTP: dict[str, tuple[str, str, str, bool, bool]] = {
    "h-plain": ("hpair", "x", "B", True, False),
    "h-cross": ("hpair", "{b}", "B", True, False),
    "h-self": ("hpair", "{a}", "B", True, False),
    "h-brace2": ("hpair", "{{b}}", "B", True, False),
    "h-fmt": ("hpair", "{b!r}", "B", True, False),
    "h-rev": ("hpair", "A", "{a}", False, True),
    "h-pct": ("hpair", "%7Bb%7D", "B", True, False),
    "g-cross": ("hget", "{b}", "B", True, False),
}


# GET params no placeholder takes go to the query: keys holding the query's own delimiters
KEYS: dict[str, str] = {
    "k-amp": "k&admin",
    "k-eq": "k=admin",
    "k-hash": "k#x",
    "k-plus": "k+x y",
    "k-pct": "k%26admin",
}


def _server(seen: list[dict[str, Any]]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, body: bytes) -> None:
            seen.append({"target": self.path, "body": body.decode("utf-8", "replace")})
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


def _plan(vid: str, a: str, b: str, a_out: bool, b_out: bool, tool: str = "pair") -> str:
    echo = {"va": a, "vb": b}
    params = {
        "tag": vid,
        "a": "$<actions[1].outputs.oa>" if a_out else a,
        "b": "$<actions[1].outputs.ob>" if b_out else b,
    }
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: echo}}, {{name: {tool}}}]\nactions:\n"
        f"  - id: 1\n    tool: echo\n    why: hand back\n    params: {json.dumps(echo)}\n"
        "    outputs: [{name: oa, path: $.va}, {name: ob, path: $.vb}]\n"
        f"  - id: 2\n    tool: {tool}\n    why: use\n    params: {json.dumps(params)}\n"
    )


def _build(root: Path) -> Lab:
    seen: list[dict[str, Any]] = []
    server = _server(seen)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    lab = Lab(root / "af")
    argv = [sys.executable, str(lab.recorder), "{tag}", "--a={a}:{b}", "{b}"]
    lab.write_config(
        tools=f"pair: {{kind: exec, argv: {json.dumps(argv)}, "
        f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
        f"hpair: {{kind: http, method: POST, url: '{base}/p/{{a}}/{{b}}', timeout: 3}}\n"
        f"hget: {{kind: http, method: GET, url: '{base}/g/{{a}}', timeout: 3}}\n"
    )
    try:
        for vid, (a, b, a_out, b_out) in VARIANTS.items():
            lab.write(vid, _plan(vid, a, b, a_out, b_out))
        for vid, (tool, a, b, a_out, b_out) in HTTP.items():
            lab.write(vid, _plan(vid, a, b, a_out, b_out, tool))
        for vid, key in KEYS.items():
            params = {"tag": vid, "a": "x", key: "1"}
            lab.write(
                vid,
                f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
                "available_tools: [{name: hget}]\nactions:\n"
                f"  - id: 1\n    tool: hget\n    why: w\n    params: {json.dumps(params)}\n",
            )
        lab.commit("plans")
        lab.run()
        for vid in [*VARIANTS, *HTTP, *KEYS]:
            lab.set_status(vid, "approved")
        lab.commit("approve", ALICE)
        lab.run()
        time.sleep(0.2)  # the server thread's last append (not a timing assert)
    finally:
        server.shutdown()
        server.server_close()
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-argvfill", _build)


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(VARIANTS), list(VARIANTS), BROKEN))
def test_placeholder_text_is_filled_once(lab: Lab, vid: str) -> None:
    a, b, _, _ = VARIANTS[vid]
    got = lab.calls(vid)
    assert len(got) == 1, (got, lab.codes(vid)[-800:])
    assert got[0]["argv"] == [vid, f"--a={a}:{b}", b], got[0]["argv"]


def _http_rows(lab: Lab, vid: str) -> list[dict[str, Any]]:
    rows = []
    for r in lab.seen:  # type: ignore[attr-defined]
        split = urlsplit(r["target"])
        query = {k: v[0] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        body = json.loads(r["body"]) if r["body"].strip() else {}
        if body.get("tag") == vid or query.get("tag") == vid:
            segs = [unquote(x) for x in split.path.split("/")]
            rows.append({"segs": segs, "query": query, "body": body})
    return rows


@pytest.mark.parametrize("vid", cases(list(HTTP), list(HTTP), BROKEN))
def test_url_placeholder_text_is_filled_once(lab: Lab, vid: str) -> None:
    tool, a, b, _, _ = HTTP[vid]
    rows = _http_rows(lab, vid)
    assert len(rows) == 1, (rows, lab.codes(vid)[-800:])
    if tool == "hpair":
        assert rows[0]["segs"] == ["", "p", a, b], rows[0]
    else:
        assert rows[0]["segs"] == ["", "g", a] and rows[0]["query"].get("b") == b, rows[0]


@pytest.mark.parametrize("vid", cases(list(KEYS), list(KEYS), BROKEN))
def test_query_keys_stay_one_key(lab: Lab, vid: str) -> None:
    rows = _http_rows(lab, vid)
    if not rows:  # refused before sending is a defence too
        assert "E_PARAMS_INVALID" in lab.codes(vid), lab.codes(vid)[-800:]
        return
    assert len(rows) == 1 and rows[0]["query"] == {"tag": vid, KEYS[vid]: "1"}, rows
