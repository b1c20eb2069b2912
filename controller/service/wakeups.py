"""Why and when the daemon's loop wakes: reasons for the next pass, and its timers.

Every event only *schedules* a pass. :class:`Wakeups` collects the reasons from any thread
(watcher, webhook, workers, signal handlers) and wakes the loop through a self-pipe, so a
signal handler never waits for a lock; :class:`Timers` holds the periodic deadlines (resync,
poll, retry after a failure).

Signals reach the loop through a socket of their own: Python's C-level handler writes each
signal's number there (``signal.set_wakeup_fd``) the moment the process takes it in, in
whichever thread the kernel chose, while the Python handler runs only later, in the main
thread, once that thread holds the GIL. :meth:`Wakeups.signalled` reads those numbers
without taking them (``MSG_PEEK``), so a worker asking "stop?" between two actions sees a
SIGTERM at once (a loaded host could schedule the Python handler after the worker had
started the next action: CI, 2026-12-07). A stop signal's byte is never drained: stopping
cannot be undone, and the socket keeps saying so.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


@dataclass
class Timers:
    """Monotonic deadlines of the loop's periodic work (None = never)."""

    resync: float
    poll: float | None = None
    retry: float | None = None
    #: an uncommitted plan file settles (see Controller.adopt_settle)
    adopt: float | None = None

    def due(self, now: float) -> list[str]:
        deadlines = {
            "resync": self.resync,
            "poll": self.poll,
            "retry": self.retry,
            "adopt": self.adopt,
        }
        return [name for name, at in deadlines.items() if at is not None and at <= now]

    def next(self) -> float:
        found = (self.resync, self.poll, self.retry, self.adopt, 1e18)
        return min(t for t in found if t is not None)


@dataclass
class Wakeups:
    """Reasons for the next pass, filled from any thread; the self-pipe wakes the loop.

    A reason added with a delay (a plan file written) waits up to that delay for company: a
    human who edits a PLAN.yml usually commits it a moment later, and one pass for both is
    cheaper and sooner than a pass for the edit that holds up the pass for the commit.
    """

    read_fd: int = -1
    write_fd: int = -1
    reasons: set[str] = field(default_factory=set)
    later: set[str] = field(default_factory=set)
    later_deadline: float | None = None
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: the numbers of signals that stop the daemon (their bytes stay in the signal socket)
    stops: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._signals_in, self._signals_out = socket.socketpair()
        for end in (self._signals_in, self._signals_out):
            end.setblocking(False)

    @property
    def signal_fd(self) -> int:
        """What ``signal.set_wakeup_fd`` writes each signal's number to."""
        return self._signals_out.fileno()

    def _pending(self) -> bytes:
        try:
            return self._signals_in.recv(4096, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except OSError:  # nothing there (BlockingIOError), or closed
            return b""

    def signalled(self) -> bool:
        """A stop signal was taken in by the process (its Python handler may not have run
        yet): one ``recv(MSG_PEEK)``."""
        return any(number in self.stops for number in self._pending())

    def add(self, reason: str, delay: float = 0.0) -> None:
        with self.lock:
            if delay <= 0:
                self.reasons.add(reason)
            else:
                self.later.add(reason)
                if self.later_deadline is None:
                    self.later_deadline = time.monotonic() + delay
        self.poke()

    def poke(self) -> None:
        if self.closed:
            return
        # A full pipe means the loop is awake anyway.
        with contextlib.suppress(BlockingIOError):
            os.write(self.write_fd, b".")

    def wait(self, until: float) -> None:
        """Sleep until ``until`` (monotonic), a delayed reason falls due, or a poke."""
        with self.lock:
            if self.later_deadline is not None:
                until = min(until, self.later_deadline)
        if self.signalled():
            return  # stopping: the loop ends now
        wait = max(until - time.monotonic(), 0)
        select.select([self.read_fd, self._signals_in.fileno()], [], [], wait)
        try:
            while os.read(self.read_fd, 4096):
                pass
        except BlockingIOError:
            pass
        self._drain_signals()

    def _drain_signals(self) -> None:
        """Take the numbers of signals that do not stop (SIGHUP); up to the first one that
        stops, which stays (exactly the bytes seen are taken: one arriving meanwhile stays)."""
        seen = self._pending()
        keep = next((i for i, number in enumerate(seen) if number in self.stops), len(seen))
        if keep:
            with contextlib.suppress(OSError):
                self._signals_in.recv(keep)

    def take(self, now: float) -> set[str]:
        """Reasons due now; delayed ones ride along with any pass (it covers them too)."""
        with self.lock:
            due = self.later_deadline is not None and self.later_deadline <= now
            if not self.reasons and not due:
                return set()
            taken = self.reasons | self.later
            self.reasons, self.later, self.later_deadline = set(), set(), None
        return taken

    def close(self) -> None:
        self.closed = True
        os.close(self.read_fd)
        os.close(self.write_fd)
        self._signals_in.close()
        self._signals_out.close()
