# ruff: noqa: E501
"""Round 53 (runs): an http tool's timeout against an answer that trickles in before its
body. docs/execution.md, Tools: "http: the whole exchange, not only each read, must fit in
the timeout" (E_TIMEOUT). Round 27 bounded a body that inflates; nobody made the *head* of
an answer slow.

Lab ``hs``: a real HTTP server on 127.0.0.1 (a thread of the test process), four catalog
tools ``POST``-ing to it with ``timeout: 1``, each plan ``tool`` then ``rec`` (action 2),
plus a bystander plan ``zz`` (``rec``) queued behind them; all approved in one commit and run
in one ``run --once`` pass. The server writes its answer a piece every 0.25 s for 6 s and
notes whether it got the whole answer out (the client still connected to the end) or the
client hung up first:

- ``hdr-drip``: the status line, then one header line every 0.25 s (24 of them), then an
  empty line and a small JSON body. **Broke**: the client keeps reading for the whole 6 s
  (each line comes within httpx's per-read timeout) and only then reports E_TIMEOUT: the
  exchange is not bounded by the tool's timeout until the head is complete. A server (or a
  host a placeholder chooses) that never stops sending header lines holds the pass, and
  every plan queued behind it, for as long as it likes.
- ``info-drip``: ``HTTP/1.1 102 Processing`` informational answers, one every 0.25 s, then
  the final 200. **Broke** the same way.
- ``body-drip`` (control): the head at once, then the body one byte every 0.25 s: held (the
  client hangs up at the 1 s timeout, E_TIMEOUT).
- ``silent`` (control): the server reads the request and says nothing for 6 s: held.

Asserted per variant: the plan ``failed`` with E_TIMEOUT, action 2 never ran, and the
server saw the client hang up before the answer was complete (it never wrote the last
piece). No duration is asserted; the server's 6 s against the 1 s timeout is the margin.
Bystander: ``zz`` ran once.

Fixed (2026-11-29): the tool's ``timeout`` bounds the whole exchange, wall clock
(``controller/execution/tools/wallclock.py``): a ``Deadline`` is told, through httpcore's
``trace`` extension, each socket the exchange opens (TCP, then TLS) and the phase it waits
in; at the deadline a timer shuts the sockets down, so a read blocked on the head, a 1xx,
the body or a write returns at once, and whatever the client makes of that (a closed
connection, a cut body) is E_TIMEOUT naming the phase ("cut while waiting for the status
line and headers"). The client closes its own sockets and the timer is joined: nothing is
left behind (``tests/execution/test_tools_http.py``). The notifier's posts
(``service/notify.py``, urllib) had the same per-read shape and take the same deadline.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

MODES = ["hdr-drip", "info-drip", "body-drip", "silent"]
BROKEN: dict[str, pytest.MarkDecorator] = {}
PIECES = 24
STEP = 0.25


def _server(done: dict[str, str]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _put(self, data: bytes) -> None:
            self.wfile.write(data)
            self.wfile.flush()

        def _end(self, data: bytes) -> None:
            """The answer's last bytes in four writes: a peer that hung up makes one raise."""
            for i in range(4):
                time.sleep(0.1)
                self._put(data[i * len(data) // 4 : (i + 1) * len(data) // 4])

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            mode = self.path.strip("/")
            done[mode] = "started"
            try:
                if mode == "hdr-drip":
                    self._put(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
                    for i in range(PIECES):
                        time.sleep(STEP)
                        self._put(f"X-Slow-{i}: x\r\n".encode())
                    self._end(b'Content-Length: 11\r\nConnection: close\r\n\r\n{"ok":true}')
                elif mode == "info-drip":
                    for _ in range(PIECES):
                        self._put(b"HTTP/1.1 102 Processing\r\n\r\n")
                        time.sleep(STEP)
                    self._end(
                        b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{"ok":true}'
                    )
                elif mode == "body-drip":
                    self._put(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 24\r\nConnection: close\r\n\r\n"
                    )
                    for _ in range(PIECES - 4):
                        time.sleep(STEP)
                        self._put(b" ")
                    self._end(b"    ")
                else:  # silent
                    for _ in range(PIECES):
                        time.sleep(STEP)
                    self._end(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
                    )
                done[mode] = "complete"
            except OSError:
                done[mode] = "client hung up"

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def _build(root: Path) -> Lab:
    done: dict[str, str] = {}
    server = _server(done)
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    tools = "".join(
        f"slow_{m.replace('-', '_')}: {{kind: http, method: POST, url: 'http://127.0.0.1:{port}/{m}', timeout: 1}}\n"
        for m in MODES
    )
    lab = Lab(root / "hs", tools=tools)
    try:
        for mode in MODES:
            tool = f"slow_{mode.replace('-', '_')}"
            lab.write(
                mode,
                f"plan:\n  name: {mode}\n  task: t\n  status: pending_approval\n"
                f"available_tools: [{{name: {tool}}}, {{name: rec}}]\nactions:\n"
                f"  - {{id: 1, tool: {tool}, why: w}}\n"
                f"  - {{id: 2, tool: rec, why: w, params: {{tag: {mode}-2}}}}\n",
            )
        lab.write("zz", plan_text("zz"))
        lab.commit("plans")
        lab.run()
        for slug in [*MODES, "zz"]:
            lab.set_status(slug, "approved")
        lab.commit("approve", ALICE)
        lab.run(timeout=240)
        deadline = time.monotonic() + 30  # let every handler finish its writes
        while time.monotonic() < deadline and (
            len(done) < len(MODES) or "started" in done.values()
        ):
            time.sleep(0.1)
    finally:
        server.shutdown()
        server.server_close()
    lab.served = dict(done)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r53-httpslow", _build)


@pytest.mark.parametrize("mode", cases(MODES, MODES, BROKEN))
def test_the_whole_exchange_fits_in_the_timeout(lab: Lab, mode: str) -> None:
    plan = lab.plan(mode)
    assert plan["plan"]["status"] == "failed", plan["plan"]
    assert "E_TIMEOUT" in str(plan["execution"]["actions"][0].get("error")), plan["execution"]
    assert lab.calls(f"{mode}-2") == []
    assert lab.served.get(mode) == "client hung up", lab.served  # type: ignore[attr-defined]


def test_the_bystander_ran(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
