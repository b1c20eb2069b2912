"""One wall-clock deadline over a whole HTTP exchange (round 53).

A socket timeout, httpx's or urllib's, bounds each read and write on its own: a server that
sends its status line, a header line or a ``102 Processing`` every 0.25 s never trips a 1 s
timeout, and kept an http tool (and every plan queued behind it) waiting as long as it
liked. :class:`Deadline` is the bound on the exchange as a whole: the client tells it each
socket it opens and which phase it is in, and a timer shuts the sockets down at the
deadline, whatever phase is waiting, so the blocked read or write returns at once. It shuts
down a duplicate of each socket's descriptor, which reaches the same connection after TLS
took the socket over (``wrap_socket`` detaches the plain socket before its handshake) and
can never be another connection's (a closed descriptor's number is reused). The client's
own clean-up closes its sockets, :meth:`Deadline.close` joins the timer and closes the
duplicates: a cut leaves no thread, socket or descriptor behind.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType


class Deadline:
    """``seconds`` from now for everything the exchange does; used as a context manager."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.phase = "connect"
        #: The phase the deadline cut, or None while the exchange is within its time.
        self.cut: str | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.name = "plangate-http-deadline"
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the timer, wait for it (it may be shutting a socket down right now), then
        close the duplicates."""
        self._timer.cancel()
        if self._timer.is_alive():
            self._timer.join()
        with self._lock:
            duplicates, self._sockets = self._sockets, []
        for duplicate in duplicates:
            duplicate.close()

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def enter(self, phase: str) -> None:
        """The exchange is now waiting on ``phase`` (what a cut's message names)."""
        if self.cut is None:
            self.phase = phase

    def watch(self, sock: socket.socket | None) -> None:
        """Shut ``sock`` down at the deadline (at once if it has passed)."""
        if sock is None or sock.fileno() < 0:
            return
        duplicate = sock.dup()
        with self._lock:
            self._sockets.append(duplicate)
            expired = self.cut is not None
        if expired:
            _shut(duplicate)

    def _expire(self) -> None:
        with self._lock:
            self.cut = self.phase
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    """Wake whatever waits on the connection (a shutdown acts on the connection, whichever
    descriptor names it; the client's own stays open for it to close)."""
    with contextlib.suppress(OSError):  # already closed, or never connected
        sock.shutdown(socket.SHUT_RDWR)
