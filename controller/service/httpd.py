"""A small threaded HTTP server for the webhook and metrics endpoints.

The standard library's ``serve_forever`` wakes up every ``poll_interval`` to check for
shutdown; an idle daemon should cost nothing, so this loop sleeps in ``select`` on the
listening socket and a self-pipe, and :meth:`HttpServer.stop` returns at once.
Each request runs in its own daemon thread with a socket timeout, so a slow client cannot
hold the endpoint.
"""

from __future__ import annotations

import os
import selectors
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from controller.errors import ConfigInvalid
from controller.logs import get_logger

log = get_logger("plangate.httpd")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        if ":" in address[0]:
            import socket

            self.address_family = socket.AF_INET6
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A bug in a handler must be logged like everything else, not printed to stderr.
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):  # the client left before the
            log.info("http.client_gone", client=str(client_address[0]))  # answer: no bug
            return
        log.exception("http.handler_failed", client=str(client_address[0]))


class QuietHandler(BaseHTTPRequestHandler):
    """Base handler: short socket timeout, request lines logged at debug, not to stderr."""

    timeout = 10
    server_version = "plangate"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def version_string(self) -> str:
        return self.server_version  # the base class appends " " + sys_version: "plangate "

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http.request", client=self.client_address[0], line=format % args)

    #: What a refused request may still send, read and dropped before the close (bytes, s).
    LINGER_BYTES = 4 << 20
    LINGER_SECONDS = 2.0

    def close_lingering(self) -> None:
        """Close after an answer given before the request's body was read (a refusal): shut
        the write side, then read and drop what the client still sends, bounded, before the
        socket closes. Closing with unread input makes the kernel reset the connection, and
        an answer not yet on the wire is lost under the reset (a lingering close, as nginx and
        Apache make; CI 2026-12-07: round 122's webhook 411 and 400 read as no answer at all)."""
        import contextlib
        import socket
        import time

        self.close_connection = True
        with contextlib.suppress(OSError, ValueError):
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + self.LINGER_SECONDS
            read = 0
            while read < self.LINGER_BYTES:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.connection.settimeout(left)
                chunk = self.connection.recv(65536)
                if not chunk:
                    break
                read += len(chunk)

    def send_body(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def _listen_remedy(exc: OSError) -> str:
    """What to change when ``bind`` refused (round 114: a host that does not resolve was
    told to pick a free port)."""
    import errno
    import socket

    if isinstance(exc, socket.gaierror):
        return "give a host name that resolves here, or an IP address of this machine"
    if exc.errno == errno.EADDRNOTAVAIL:
        return "listen on an address of this machine (127.0.0.1, 0.0.0.0, one `ip addr` lists)"
    if exc.errno == errno.EACCES:
        return "use a port above 1023, or give the service CAP_NET_BIND_SERVICE"
    if exc.errno == errno.EADDRINUSE:
        return "pick a free port, or stop the process that holds it"
    return "check the host and port: see the reason above"


class HttpServer:
    """One listening endpoint served from a background thread."""

    def __init__(self, listen: str, key: str, handler: type[BaseHTTPRequestHandler]) -> None:
        from controller.settings import LISTEN_REMEDY, parse_listen  # pydantic: lazily

        try:
            host, port = parse_listen(listen)  # the config's own parser: checked at load too
        except ValueError as exc:
            raise ConfigInvalid(f"{key}: {listen!r}: {exc}", remedy=LISTEN_REMEDY) from None
        try:
            self._server = _Server((host, port), handler)
        except OSError as exc:
            raise ConfigInvalid(
                f"{key}: cannot listen on {listen}: {exc.strerror}", remedy=_listen_remedy(exc)
            ) from None
        self.key = key
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False
        self._thread = threading.Thread(target=self._serve, name=f"http:{key}", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> HttpServer:
        self._thread.start()
        log.info(
            "http.listening", endpoint=self.key, address=f"{self.address[0]}:{self.address[1]}"
        )
        return self

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._server, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while not self._stopping:
                for key, _ in selector.select():
                    if key.fileobj is self._server and not self._stopping:
                        self._server.handle_request()

    def stop(self) -> None:
        self._stopping = True
        os.write(self._wake_w, b"x")
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._server.server_close()
        os.close(self._wake_r)
        os.close(self._wake_w)
