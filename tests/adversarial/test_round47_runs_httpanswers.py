# ruff: noqa: E501
"""Round 47, a hostile tool answer never crashes or stalls the pass and gets an ``E_...``
code: an http server (the outside system a GET tool reads) answering with HTTP framing that
is broken or unusual, rather than with a hostile body (rounds 22, 27 tried lengths and
content codings).

Lab ``ha`` (local mode): a raw-socket server the bench starts (and stops) on 127.0.0.1
answers ``/<kind>`` with fixed bytes; the catalog tool ``hg`` is ``GET
http://127.0.0.1:<port>/{p}``. Each plan: action 1 ``hg`` with ``p: <kind>``
(``on_failure: skip``), action 2 ``rec``; a control ``ctl``. Alice approves all; one pass.

Kinds: a 200 KB header line (``bighdr``), an illegal status line, an HTTP/0.9 bare body, status
999, header bytes that are no text, a Content-Length longer than the body, an illegal chunk
header, an unknown charset on JSON and on text, 5,000 headers, an unasked ``101``, a ``204``
with a body, ``br`` / ``zstd`` / ``identity, gzip`` content codings on a plain body.

Asserted: the pass exits 0, no ``tool_crashed`` traceback for any plan; ``ctl`` and every
action 2 ran once; an action 1 that failed carries an ``E_`` code and no "internal error".
All held (round 47).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import ALICE, BenchError, Lab, plan_text
from test_round2_execution_kit import shared

SERVER = r"""import socket, sys, threading
RESP = {
 "bighdr": b"HTTP/1.1 200 OK\r\nX-A: " + b"a" * 200000 + b"\r\nContent-Length: 2\r\n\r\n{}",
 "badstatus": b"HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\n{}",
 "http09": b"{}",
 "s999": b"HTTP/1.1 999 Weird\r\nContent-Length: 2\r\n\r\n{}",
 "hdrbytes": b"HTTP/1.1 200 OK\r\nX-A: \xff\xfe\x80\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
 "cl-short": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}",
 "badchunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
 "ctype-charset": b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=nonexistent-xx\r\nContent-Length: 2\r\n\r\n{}",
 "text-charset": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=nonexistent-xx\r\nContent-Length: 3\r\n\r\nabc",
 "many-hdrs": b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(5000)) + b"Content-Length: 2\r\n\r\n{}",
 "s101": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n",
 "s204body": b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello",
 "enc-br": b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}",
 "enc-zstd": b"HTTP/1.1 200 OK\r\nContent-Encoding: zstd\r\nContent-Length: 2\r\n\r\n{}",
 "enc-identity-gzip": b"HTTP/1.1 200 OK\r\nContent-Encoding: identity, gzip\r\nContent-Length: 2\r\n\r\n{}",
}
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(50)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
def h(c):
    data = b""
    while b"\r\n\r\n" not in data:
        d = c.recv(65536)
        if not d: break
        data += d
    path = data.split(b" ")[1].decode().strip("/") if b" " in data else ""
    c.sendall(RESP.get(path, b"HTTP/1.1 404 NF\r\nContent-Length: 0\r\n\r\n"))
    c.close()
while True:
    c, _ = s.accept(); threading.Thread(target=h, args=(c,), daemon=True).start()
"""
KINDS = [
    "bighdr",
    "badstatus",
    "http09",
    "s999",
    "hdrbytes",
    "cl-short",
    "badchunk",
    "ctype-charset",
    "text-charset",
    "many-hdrs",
    "s101",
    "s204body",
    "enc-br",
    "enc-zstd",
    "enc-identity-gzip",
]


def _build(root: Path) -> Lab:
    (root / "srv.py").write_text(SERVER)
    portfile = root / "port.txt"
    server = subprocess.Popen([sys.executable, str(root / "srv.py"), str(portfile)])
    try:
        deadline = time.time() + 20
        while not (portfile.exists() and portfile.read_text().strip()):
            if time.time() > deadline:
                raise BenchError("the answer server did not start")
            time.sleep(0.05)
        port = portfile.read_text().strip()
        lab = Lab(
            root / "ha",
            tools=f"hg: {{kind: http, method: GET, url: 'http://127.0.0.1:{port}/{{p}}', timeout: 5}}\n",
        )
        for k in KINDS:
            lab.write(
                k,
                f"plan:\n  name: {k}\n  task: t\n  status: pending_approval\n"
                "available_tools: [{name: hg}, {name: rec}]\nactions:\n"
                f"  - id: 1\n    tool: hg\n    why: w\n    params: {{p: {k}}}\n    on_failure: skip\n"
                f"  - id: 2\n    tool: rec\n    why: r\n    params: {{tag: {k}}}\n",
            )
        lab.write("ctl", plan_text("ctl"))
        lab.commit("plans")
        lab.run()
        for k in [*KINDS, "ctl"]:
            lab.set_status(k, "approved")
        lab.commit("approve", ALICE)
        r = lab.run(check=False)
        lab.result = {"rc": r.returncode, "stderr": r.stderr}  # type: ignore[attr-defined]
    finally:
        server.kill()
        server.wait()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r47-httpanswers", _build)


def test_the_pass_went_on(lab: Lab) -> None:
    res = lab.result  # type: ignore[attr-defined]
    assert res["rc"] == 0, res["stderr"][-2000:]
    assert "tool_crashed" not in res["stderr"] and "Traceback" not in res["stderr"]
    assert len(lab.calls("ctl")) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_broken_answer_gets_a_code(lab: Lab, kind: str) -> None:
    acts = (lab.plan(kind).get("execution") or {}).get("actions") or []
    assert acts, lab.codes(kind)[:800]
    first = acts[0]
    if first.get("status") != "succeeded":
        err = first.get("error") or {}
        assert str(err.get("code", "")).startswith("E_"), err
        assert "internal error" not in json.dumps(err), err
    assert len(lab.calls(kind)) == 1
