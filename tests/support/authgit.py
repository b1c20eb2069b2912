"""A git repository served over smart HTTP on 127.0.0.1 behind basic auth (``git
http-backend`` as a CGI under a small ``http.server``), and a watcher of the process table:
what a remote with a password in its URL needs, and what every process on the host reads
(``/proc/<pid>/cmdline``)."""

from __future__ import annotations

import base64
import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Backend(BaseHTTPRequestHandler):
    root: Path
    credential: str  # "user:password"
    #: the Authorization values the server was sent, as base64-decoded
    seen: list[str]

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _serve(self) -> None:
        body = self._body()
        given = self.headers.get("Authorization", "")
        if given.startswith("Basic "):
            self.seen.append(base64.b64decode(given[6:]).decode("utf-8", "replace"))
        if given != "Basic " + base64.b64encode(self.credential.encode()).decode():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="plans"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ["PATH"],
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": self.credential.partition(":")[0],
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        out = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
        ).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@contextlib.contextmanager
def served(root: Path, user: str, password: str) -> Iterator[tuple[str, list[str]]]:
    """Serve the bare repositories under ``root`` at ``http://127.0.0.1:<port>/``, every
    request refused 401 but with ``user:password``: (the base URL, the credentials sent)."""
    seen: list[str] = []
    handler = type(
        "Backend", (_Backend,), {"root": root, "credential": f"{user}:{password}", "seen": seen}
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


class Watcher:
    """Reads every ``/proc/<pid>/cmdline`` every few milliseconds (as any process on the host
    may): the command lines that held one of ``values``, and how many processes it saw."""

    def __init__(self, values: list[str]) -> None:
        self.values = [v.encode() for v in values]
        self.found: set[str] = set()
        self.processes: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _watch(self) -> None:
        while not self._stop.is_set():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        line = f.read()
                except OSError:
                    continue
                self.processes.add(line.replace(b"\0", b" ").decode("utf-8", "replace")[:200])
                if any(v in line for v in self.values):
                    self.found.add(line.replace(b"\0", b" ").decode("utf-8", "replace"))
            self._stop.wait(0.005)


def hold_url_in_config(clone: Path, url: str, *, push: bool = False) -> None:
    """Write ``url`` as the clone's ``remote.origin.url`` (and ``pushurl``), as a clone made
    before round 128 held it: edited in the file, so no command line of the bench holds it
    (a watcher of another test running beside this one reads every command line)."""
    config = clone / "config"
    lines = [
        f"\turl = {url}" if line.strip().startswith("url = ") else line
        for line in config.read_text().splitlines()
    ]
    if push:
        lines.insert(lines.index('[remote "origin"]') + 1, f"\tpushurl = {url}")
    config.write_text("\n".join(lines) + "\n")
