"""Round 27, one hostile tool output never starves the pass (memory bound): results far
larger than ``limits.max_result_bytes`` handed back through the channels that are not an
exec tool's stdout (which earlier rounds bounded).

One lab, a local HTTP server in the bench, every plan approved by Alice in one commit, one
``run --once`` pass whose controller process (``plangate``, not its tool children) has its
resident memory sampled every 50 ms from ``/proc``:

- ``http-200``: an http GET answered ``200`` with a 200 MB ``text/plain`` body;
- ``http-500``: the same body with status ``500`` (E_TOOL_FAILED "with the response as the
  result");
- ``http-json``: a 200 MB JSON string (``application/json``), which a client would parse whole;
- ``py-str``: a python tool returning a 100 MB string (its own child process holds it);
- ``py-print``: a python tool printing 100 MB through ``sys.stdout`` (sent to stderr) and
  writing 100 MB straight to fd 2;
- ``py-raise``: a python tool raising ``ValueError`` with a 100 MB message (E_TOOL_FAILED
  carries ``Type: message``);
- ``gzip-1``: a 583 KB ``Content-Encoding: gzip`` body that inflates to 600 MB.

Then a second pass, with one more plan approved:

- ``gzip-2``: a 1,100-byte body sent ``Content-Encoding: gzip, gzip`` (the 583 KB gzip stream
  gzipped again), which inflates to the same 600 MB; the honest ``zz2`` is approved with it.

Every hostile action has ``on_failure: skip``. Asserted per pass: it exits 0 without a
traceback, the controller's peak RSS stays under 150 MB, each hostile plan ended (completed
or failed), nothing over 1 MiB was committed for it, and the honest plan ran once.

Held: ``http-200``, ``http-500``, ``http-json``, ``py-str``, ``py-print``, ``py-raise``,
``gzip-1`` (peak about 250 MB: one socket read inflated whole, bounded by the ratio of one
read). **Broke** (round 27), fixed (a body is decoded a bounded step at a time, every layer:
``controller.execution.tools.http._decoded``):
``gzip-2``: the controller's RSS reached 1,176 MB for a 1,100-byte response (2.3 GB with a
1.2 GB inner stream, a 2,020-byte response): each layer is inflated without a bound
before the result limit applies, so a few KB from any http tool can take the controller's
memory (and the pass, and every other plan) down. It should stream-decode with a cap (or
refuse stacked encodings) and fail the action ``E_LIMIT_EXCEEDED``/``E_TOOL_OUTPUT_INVALID``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import subprocess
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

HTTP_SIZE = 200_000_000
PY_SIZE = 100_000_000
VARIANTS = {
    "http-200": "h200",
    "http-500": "h500",
    "http-json": "hjson",
    "py-str": "pbig",
    "py-print": "pnoisy",
    "py-raise": "pboom",
    "gzip-1": "hgz1",
}
#: The controller peaked at 57-62 MB in both passes once bodies were decoded a step at a
#: time (2026-11-28; 250 MB for gzip-1 and 1,176 MB for gzip-2 before): 150 MB leaves room.
LIMIT_MB = 150


def _gzip(data_chunks: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"0" * 10_000_000
    return b"".join(c.compress(zeros) for _ in range(data_chunks)) + c.flush()


@functools.cache
def _bodies() -> tuple[bytes, bytes]:
    """600 MB of zeros gzipped (583 KB), and that stream gzipped again (1,100 bytes)."""
    gz1 = _gzip(60)
    return gz1, zlib.compress(gz1, 9, wbits=31)


class _Big(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if "/gz" in self.path:
            body = _bodies()[1] if "gz2" in self.path else _bodies()[0]
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Encoding", "gzip, gzip" if "gz2" in self.path else "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(body)
            return
        is_json = "json" in self.path
        self.send_response(500 if "500" in self.path else 200)
        self.send_header("Content-Type", "application/json" if is_json else "text/plain")
        self.send_header("Content-Length", str(HTTP_SIZE))
        self.end_headers()
        chunk = b"a" * 1_000_000
        rest = HTTP_SIZE
        try:
            if is_json:
                self.wfile.write(b'"')
                rest -= 2
            while rest > 0:
                n = min(rest, len(chunk))
                self.wfile.write(chunk[:n])
                rest -= n
            if is_json:
                self.wfile.write(b'"')
        except OSError:
            pass

    def log_message(self, *args: object) -> None:
        pass


def _measured_pass(lab: Lab, root: Path) -> tuple[int, bool, int, float]:
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    plangate = str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "plangate")
    started = time.monotonic()
    proc = subprocess.Popen(
        [plangate, "run", "--once", "--config", str(lab.config)],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))  # type: ignore[union-attr]
    reader.start()
    peak = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    reader.join()
    return (
        proc.returncode,
        b"Traceback" in b"".join(err),
        peak // 1024,
        time.monotonic() - started,
    )


def _build(root: Path) -> Lab:
    _bodies()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Big)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    (root / "pyt").mkdir()
    (root / "pyt" / "bigmod.py").write_text(
        f"def big():\n    return 'x' * {PY_SIZE}\n"
        "def noisy():\n    import os, sys\n"
        f"    for _ in range({PY_SIZE // 1_000_000}):\n"
        "        sys.stdout.write('x' * 1_000_000)\n        os.write(2, b'y' * 1_000_000)\n"
        "    return 1\n"
        f"def boom():\n    raise ValueError('x' * {PY_SIZE})\n"
    )
    base = f"http://127.0.0.1:{port}"
    lab = Lab(
        root,
        tools=f"""
        h200: {{kind: http, method: GET, url: "{base}/big"}}
        h500: {{kind: http, method: GET, url: "{base}/big500"}}
        hjson: {{kind: http, method: GET, url: "{base}/bigjson"}}
        pbig: {{kind: python, target: "bigmod:big", timeout: 30}}
        pnoisy: {{kind: python, target: "bigmod:noisy", timeout: 30}}
        pboom: {{kind: python, target: "bigmod:boom", timeout: 30}}
        hgz1: {{kind: http, method: GET, url: "{base}/gz1"}}
        hgz2: {{kind: http, method: GET, url: "{base}/gz2"}}
        """,
        extra=f"python_path: [{json.dumps(str(root / 'pyt'))}]\n",
    )
    for vid, tool in (*VARIANTS.items(), ("gzip-2", "hgz2")):
        lab.write(
            vid,
            f'plan:\n  name: "{vid}"\n  task: t\n  status: pending_approval\n'
            f"available_tools:\n  - name: {tool}\nactions:\n"
            f"  - {{id: 1, tool: {tool}, why: w, on_failure: skip}}\n",
        )
    lab.write("zz", plan_text("zz"))
    lab.write("zz2", plan_text("zz2"))
    lab.commit("plans")
    lab.run()
    for slug in (*VARIANTS, "zz"):
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.pass_result = _measured_pass(lab, root)  # type: ignore[attr-defined]
    lab.set_status("gzip-2", "approved")
    lab.set_status("zz2", "approved")
    lab.commit("approve gzip-2", ALICE)
    lab.pass2_result = _measured_pass(lab, root)  # type: ignore[attr-defined]
    server.shutdown()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r27-runs-bigresult", _build)


def _check_pass(lab: Lab, result: tuple[int, bool, int, float], honest: str) -> None:
    code, traceback, peak_mb, _ = result
    assert code == 0 and not traceback
    assert len(lab.calls(honest)) == 1
    assert peak_mb < LIMIT_MB, f"controller peak RSS {peak_mb} MB"


def test_pass_bounded(lab: Lab) -> None:
    _check_pass(lab, lab.pass_result, "zz")  # type: ignore[attr-defined]


def test_gzip_2_pass_bounded(lab: Lab) -> None:
    _check_pass(lab, lab.pass2_result, "zz2")  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", [*VARIANTS, "gzip-2"])
def test_hostile_result_bounded(lab: Lab, vid: str) -> None:
    assert lab.status()[f"plans/{vid}"]["status"] in ("completed", "failed")
    sizes = lab.git("log", "--all", "--format=", "--raw", "--no-abbrev", "--", f"plans/{vid}")
    for line in sizes.splitlines():
        blob = line.split()[3]
        if set(blob) != {"0"}:
            assert int(lab.git("cat-file", "-s", blob).strip()) <= 1 << 20
