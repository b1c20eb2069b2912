"""Why and when the daemon's loop wakes: reasons for the next pass, and its timers.

Every event only *schedules* a pass. :class:`Wakeups` collects the reasons from any thread
(watcher, webhook, workers, signal handlers) and wakes the loop through a self-pipe, so a
signal handler never waits for a lock; :class:`Timers` holds the periodic deadlines (resync,
poll, retry after a failure).
"""

from __future__ import annotations

import contextlib
import os
import select
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

    def __post_init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

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
        select.select([self.read_fd], [], [], max(until - time.monotonic(), 0))
        try:
            while os.read(self.read_fd, 4096):
                pass
        except BlockingIOError:
            pass

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
