"""Round 6, stall the controller: hold the daemon's page and webhook sockets open (a
slowloris: partial request headers trickled forever, a webhook POST announcing 1 MB and
sending one byte) while a plan is submitted and approved. The defence: the daemon still
freezes and runs it within seconds, exactly once, and the page still answers.
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from advkit import ALICE, BenchError, Lab, plan_text

SECRET = "s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t"


def _hold(port: int, first: bytes, socks: list[socket.socket], count: int) -> None:
    for _ in range(count):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=0.5)
            s.sendall(first)
        except OSError:
            return  # the server stopped accepting: the backlog is full
        socks.append(s)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    root = tmp_path_factory.mktemp("r6-daemon")
    lab = Lab(root, extra="ui: {listen: 0}\nwebhook: {listen: '127.0.0.1:0'}\n")
    env = lab.env()
    env.update(REC_LOG=str(lab.log), PLANGATE_WEBHOOK_SECRET=SECRET)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()  # type: ignore[arg-type]
    socks: list[socket.socket] = []
    stop = threading.Event()
    try:
        ports: dict[str, int] = {}
        deadline = time.time() + 30
        while time.time() < deadline and len(ports) < 2:
            for line in list(lines):
                m = re.search(r'"endpoint": "(\w+)\.listen", "address": "127\.0\.0\.1:(\d+)"', line)
                if m:
                    ports[m.group(1)] = int(m.group(2))
            time.sleep(0.1)
        if len(ports) < 2:
            raise BenchError(f"the daemon never listened: {''.join(lines)[-800:]}")
        _hold(ports["ui"], b"GET / HTTP/1.1\r\n", socks, 40)
        _hold(ports["webhook"], b"POST /webhook HTTP/1.1\r\n", socks, 40)
        _hold(
            ports["webhook"],
            b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"X-Plangate-Secret: " + SECRET.encode() + b"\r\nContent-Length: 1000000\r\n\r\n{",
            socks,
            5,
        )

        def trickle() -> None:
            while not stop.wait(0.5):
                for s in list(socks):
                    with contextlib.suppress(OSError):
                        s.sendall(b"X-a: b\r\n")

        threading.Thread(target=trickle, daemon=True).start()
        lab.held = len(socks)  # type: ignore[attr-defined]
        lab.write("under-siege", plan_text("under-siege"))
        lab.commit("submit")
        t0 = time.time()
        while time.time() - t0 < 20 and not lab.status().get("plans/under-siege", {}).get(
            "frozen_hash"
        ):
            time.sleep(0.3)
            lab._status = None  # type: ignore[attr-defined]
        time.sleep(1.1)  # the approval follows the freeze by a whole second (the date rule)
        lab.approve("under-siege", ALICE)
        t0 = time.time()
        while time.time() - t0 < 20 and not lab.calls("under-siege"):
            time.sleep(0.2)
        time.sleep(1.0)  # a second run would show here
        lab.ran_after = time.time() - t0  # type: ignore[attr-defined]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ports['ui']}/", timeout=10) as resp:
                lab.page_status = resp.status  # type: ignore[attr-defined]
        except OSError as exc:
            lab.page_status = str(exc)  # type: ignore[attr-defined]
    finally:
        stop.set()
        for s in socks:
            s.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            proc.kill()
    return lab


def test_held_sockets_never_stall_the_controller_nor_the_page(lab: Lab) -> None:
    assert lab.held > 0  # type: ignore[attr-defined]
    assert len(lab.calls("under-siege")) == 1
    assert lab.ran_after < 15  # type: ignore[attr-defined]
    assert lab.page_status == 200, lab.page_status  # type: ignore[attr-defined]
