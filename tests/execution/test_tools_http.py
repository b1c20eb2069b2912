"""The http tool kind against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs

import pytest

from controller.errors import PlangateError
from controller.execution.tools import CallContext, ToolError
from controller.execution.tools.http import HttpTool
from controller.settings import ToolSpec


def _zlib(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return packer.compress(data) + packer.flush()


ANSWER = json.dumps({"ok": True, "items": list(range(2000))}).encode()
#: 64 MB of zeros gzipped twice: a 1 KB body whose inner layer alone is 64 KB
BOMB = _zlib(_zlib(b"0" * 64_000_000, 31), 31)
#: name -> (Content-Encoding, body)
ENCODED = {
    "gzip": ("gzip", _zlib(ANSWER, 31)),
    "x-gzip": ("x-gzip", _zlib(ANSWER, 31)),
    "deflate": ("deflate", _zlib(ANSWER, 15)),  # zlib-wrapped, as the RFC says
    "raw-deflate": ("deflate", _zlib(ANSWER, -15)),  # as some servers send "deflate"
    "gzip-gzip": ("gzip, gzip", _zlib(_zlib(ANSWER, 31), 31)),
    "identity-gzip": ("identity, gzip", _zlib(ANSWER, 31)),
    "br": ("br", b"\x0b\x02\x80{}\x03"),
    "broken": ("gzip", b"this is no gzip stream"),
    "truncated": ("gzip", _zlib(ANSWER, 31)[:-12]),
    "empty": ("gzip", b""),  # a HEAD's or 204's answer: no body to decode
    "bomb": ("gzip, gzip", BOMB),
}


class Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append(
            {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
        )
        if self.path.startswith("/status/"):
            self._reply(int(self.path.split("/")[2]), b'{"error": "nope"}')
        elif self.path.startswith("/slow"):
            time.sleep(2)
            self._reply(200, b"{}")
        elif self.path.startswith("/big"):
            self._reply(200, b"z" * 50_000, "text/plain")
        elif self.path.startswith("/coded/"):
            coding, body = ENCODED[self.path.split("/")[2]]
            self._reply(200, body, "application/json", coding)
        else:
            self._reply(200, json.dumps({"echo": json.loads(body or b"null")}).encode())

    def _reply(
        self, status: int, data: bytes, ctype: str = "application/json", coding: str = ""
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if coding:
            self.send_header("Content-Encoding", coding)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = _handle

    def log_message(self, *args: Any) -> None:
        pass


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the client hung up on /slow on purpose


@pytest.fixture
def server() -> Iterator[str]:
    Recorder.seen = []
    httpd = QuietServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def ctx(timeout: float = 10, limit: int = 65_536) -> CallContext:
    return CallContext(
        idempotency_key="step:1111222233334444", timeout=timeout, max_result_bytes=limit
    )


def tool(url: str, method: str = "POST", **extra: Any) -> HttpTool:
    return HttpTool("hook", ToolSpec(kind="http", url=url, method=method, **extra))


def test_posts_params_as_json_with_idempotency_key(server: str) -> None:
    result = tool(server + "/hooks/{channel}", headers={"X-Team": "ops"}).call(
        {"channel": "ops", "text": "hi"}, ctx()
    )
    assert result["status"] == 200
    assert result["json"] == {"echo": {"channel": "ops", "text": "hi"}}
    assert set(result) == {"status", "headers", "json", "text"}
    request = Recorder.seen[-1]
    assert request["path"] == "/hooks/ops"
    assert request["headers"]["Idempotency-Key"] == "step:1111222233334444"
    assert request["headers"]["X-Team"] == "ops"


def test_placeholders_are_url_encoded(server: str) -> None:
    tool(server + "/hooks/{channel}").call({"channel": "../admin?x=1#y z"}, ctx())
    assert Recorder.seen[-1]["path"] == "/hooks/%2E%2E%2Fadmin%3Fx%3D1%23y%20z"


@pytest.mark.parametrize("value", ["..", ".", "a.b"])
def test_a_placeholder_is_one_segment_even_of_dots(server: str, value: str) -> None:
    """Round 14: a value ``..`` or ``.`` was a dot segment the client resolved (the request
    went to ``/post`` instead of ``/hooks/../post``)."""
    tool(server + "/hooks/{channel}/post").call({"channel": value}, ctx())
    assert Recorder.seen[-1]["path"] == "/hooks/" + value.replace(".", "%2E") + "/post"


def test_a_dot_segment_made_of_placeholders_and_template_is_refused(server: str) -> None:
    with pytest.raises(PlangateError) as raised:
        tool(server + "/files/{a}.{b}/x").call({"a": "", "b": ""}, ctx())
    assert raised.value.code == "E_PARAMS_INVALID"
    assert Recorder.seen == []


@pytest.mark.parametrize(
    "value",
    ["a" * 64, "a" * 300, "", "\u00e9" * 40, "xn--a", "XN--a", "xn--zz-"],
    ids=["64", "300", "empty", "uni-long", "xn", "xn-upper", "xn-bad"],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_host_label_no_client_can_send_is_a_params_error_sending_nothing(
    server: str, method: str, value: str
) -> None:
    """Round 47: a host placeholder filled with a label IDNA refuses (empty, over 63
    characters, an ``xn--`` label that is no valid Punycode) raised UnicodeError while
    sending (a traceback, "internal error"); it is E_PARAMS_INVALID, permanent, naming the
    placeholder and the rule, no credential of the URL shown, and nothing is sent."""
    port = server.rsplit(":", 1)[1]
    url = "http://tok:s3cret@{h}.localhost:" + port + "/x?api_key=k3y"
    with pytest.raises(PlangateError) as raised:
        tool(url, method=method).call({"h": value, "n": 1}, ctx())
    error = raised.value
    assert error.code == "E_PARAMS_INVALID" and error.permanent, error
    assert "{h}" in error.message and "1 to 63 characters" in error.message, error.message
    assert "IDNA" in error.message and len(error.message) < 800, error.message
    assert "s3cret" not in error.message and "k3y" not in error.message
    assert "Traceback" not in error.message and "internal error" not in error.message
    assert Recorder.seen == []
    # the same URL with a label a client can send reaches the server
    good = "http://{h}:" + port + "/x"
    assert tool(good, method=method).call({"h": "localhost", "n": 1}, ctx())["status"] == 200
    assert Recorder.seen[-1]["path"].startswith("/x")


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_url_no_client_can_send_is_a_params_error_sending_nothing(
    server: str, method: str
) -> None:
    """Round 22: a 70 KB value in a URL placeholder (or a GET's query) crashed the call with
    httpx's InvalidURL and a traceback; it is E_PARAMS_INVALID, permanent, and nothing is sent."""
    for url, params in (
        (server + "/x/{p}", {"p": "v" * 70_000}),
        (server + "/q", {"q": "v" * 70_000}),
    ):
        if method == "POST" and "{p}" not in url:
            continue  # a POST's params are its body: any size the body limit allows
        with pytest.raises(PlangateError) as raised:
            tool(url, method=method).call(params, ctx())
        assert raised.value.code == "E_PARAMS_INVALID", raised.value
        assert "URL" in raised.value.message and len(raised.value.message) < 600
    assert Recorder.seen == []


@pytest.mark.parametrize("url", ["/hooks/{c}/post", "/items/{c}", "/a/{c}{d}/b"])
def test_a_placeholder_filled_with_nothing_is_refused(server: str, url: str) -> None:
    """Round 24: ``/hooks/{c}/post`` with ``c: ""`` went to ``/hooks//post``, which servers
    merge into ``/hooks/post``; ``/items/{c}`` to the collection ``/items/``."""
    with pytest.raises(PlangateError) as raised:
        tool(server + url).call({"c": "", "d": ""}, ctx())
    assert raised.value.code == "E_PARAMS_INVALID" and "empty path segment" in raised.value.message
    assert Recorder.seen == []
    tool(server + "/q?x={c}").call({"c": ""}, ctx())  # an empty query value is a value
    assert Recorder.seen[-1]["path"] == "/q?x="


def test_get_sends_no_body(server: str) -> None:
    result = tool(server + "/get", method="GET").call({"a": 1}, ctx())
    assert result["status"] == 200 and Recorder.seen[-1]["body"] == b""


def test_get_sends_the_params_no_placeholder_takes_as_its_query(server: str) -> None:
    # round 18: they were dropped while show and the committed log listed them
    params = {"id": "7", "limit": 5, "only_mine": True, "f": {"b": 1}, "q": "a b&c"}
    tool(server + "/items/{id}?v=2", method="GET").call(params, ctx())
    path = Recorder.seen[-1]["path"]
    base, _, query = path.partition("?")
    assert base == "/items/7" and Recorder.seen[-1]["body"] == b""
    assert parse_qs(query) == {
        "v": ["2"],
        "limit": ["5"],
        "only_mine": ["true"],
        "f": ['{"b":1}'],
        "q": ["a b&c"],
    }


@pytest.mark.parametrize(("status", "permanent"), [(404, True), (429, False), (503, False)])
def test_error_status_fails(server: str, status: int, permanent: bool) -> None:
    with pytest.raises(ToolError) as info:
        tool(server + f"/status/{status}").call({}, ctx())
    assert info.value.code == "E_TOOL_FAILED" and info.value.permanent is permanent
    assert info.value.result["status"] == status


def test_timeout(server: str) -> None:
    with pytest.raises(PlangateError) as info:
        tool(server + "/slow").call({}, ctx(timeout=0.5))
    assert info.value.code == "E_TIMEOUT"


def test_body_cut_at_limit(server: str) -> None:
    result = tool(server + "/big", method="GET").call({}, ctx(limit=100))
    assert result["text"].startswith("z" * 100) and "49900 more bytes dropped" in result["text"]


def test_connection_refused_is_temporary() -> None:
    with pytest.raises(ToolError) as info:
        tool("http://127.0.0.1:9/none").call({}, ctx(timeout=2))
    assert not info.value.permanent


@pytest.mark.parametrize(
    "name", ["gzip", "x-gzip", "deflate", "raw-deflate", "gzip-gzip", "identity-gzip"]
)
def test_a_content_encoded_body_is_decoded(server: str, name: str) -> None:
    result = tool(f"{server}/coded/{name}", method="GET").call({}, ctx())
    assert result["json"] == json.loads(ANSWER)
    assert Recorder.seen[-1]["headers"]["Accept-Encoding"] == "gzip, deflate"


def test_an_encoded_answer_without_a_body_is_empty(server: str) -> None:
    result = tool(f"{server}/coded/empty", method="GET").call({}, ctx())
    assert result["text"] == "" and result["json"] is None


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("br", "content encoding 'br' is not read"),
        ("broken", "could not be decoded"),
        ("truncated", "ended inside its compressed data"),
    ],
)
def test_a_body_it_cannot_decode_fails_the_call(server: str, name: str, why: str) -> None:
    with pytest.raises(ToolError, match=why):
        tool(f"{server}/coded/{name}", method="GET").call({}, ctx())


def test_stacked_compression_is_decoded_a_bounded_step_at_a_time(server: str) -> None:
    """Round 27: a 1 KB body sent ``gzip, gzip`` inflated whole (600 MB) in the controller.
    Every layer now hands on at most DECODE_STEP bytes at a time; the result is cut at the
    limit and the rest counted, never held."""
    import httpx

    from controller.execution.tools import http

    assert len(BOMB) < 70_000
    with (
        httpx.Client() as client,
        client.stream(
            "GET", f"{server}/coded/bomb", headers={"Accept-Encoding": "gzip"}
        ) as response,
    ):
        steps = [len(chunk) for chunk in http._decoded(response)]
    assert sum(steps) == 64_000_000 and max(steps) <= http.DECODE_STEP

    result = tool(f"{server}/coded/bomb", method="GET").call({}, ctx(limit=1000))
    assert result["json"] is None
    assert result["text"].startswith("0" * 1000)
    assert "63999000 more bytes dropped" in result["text"]


#: Round 53: answers sent a piece every STEP seconds, for far longer than the 0.5 s timeout.
TRICKLES = {
    "head": [b"HTTP/1.1 200 OK\r\n"] + [b"X-Slow: x\r\n"] * 40 + [b"Content-Length: 2\r\n\r\n{}"],
    "informational": [b"HTTP/1.1 102 Processing\r\n\r\n"] * 40
    + [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"],
    # no Content-Length: the body ends when the server closes, so a cut body looks complete
    "until-close": [b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"] + [b" "] * 40 + [b"{}"],
}
STEP = 0.1


class Trickler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    outcome: ClassVar[dict[str, str]] = {}

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        name = self.path.strip("/")
        try:
            for piece in TRICKLES[name]:
                self.wfile.write(piece)
                self.wfile.flush()
                time.sleep(STEP)
            self.outcome[name] = "complete"
        except OSError:
            self.outcome[name] = "client hung up"

    def log_message(self, *args: Any) -> None:
        pass


def _open_fds() -> int:
    import os

    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize(
    ("name", "phase"),
    [
        ("head", "waiting for the status line and headers"),
        ("informational", "waiting for the status line and headers"),
        ("until-close", "reading the body"),
    ],
)
def test_the_timeout_bounds_the_whole_exchange(name: str, phase: str) -> None:
    """Round 53: httpx's timeouts are per read, so a head (or 1xx answers, or a body read
    until close) trickled in a piece at a time never tripped them. The deadline cuts the
    exchange in any phase; the cut leaves no thread, socket or descriptor behind."""
    Trickler.outcome = {}
    httpd = QuietServer(("127.0.0.1", 0), Trickler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        before = _open_fds()
        with pytest.raises(PlangateError) as info:
            tool(f"http://127.0.0.1:{httpd.server_address[1]}/{name}").call({}, ctx(timeout=0.5))
        assert info.value.code == "E_TIMEOUT" and f"cut while {phase}" in str(info.value)
        assert not [t for t in threading.enumerate() if t.name == "plangate-http-deadline"]
        deadline = time.monotonic() + 30  # the server notices the hang-up at its next write
        while name not in Trickler.outcome and time.monotonic() < deadline:
            time.sleep(0.05)
        assert Trickler.outcome == {name: "client hung up"}
        while _open_fds() > before and time.monotonic() < deadline:
            time.sleep(0.05)  # the server's side of the connection closes after its handler
        assert _open_fds() == before
    finally:
        httpd.shutdown()
        httpd.server_close()
