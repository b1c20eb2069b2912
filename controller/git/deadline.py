"""Deadlines for the git children this process waits on.

A git command run to completion is bounded by ``subprocess``'s timeout
(:meth:`~controller.git.base.RepoBase.run_raw`). The long-lived ones are not: GitPython's
persistent ``cat-file``, the cold scan's ``cat-file --batch`` streams and ``git log``. A read
from one of them waits for as long as git does, and git waits for ever on a FIFO in the
object store or a stalled file system. So every such wait registers a deadline here; one
watchdog thread kills the child whose answer is overdue, the read ends, and the caller turns
it into ``E_GIT`` naming what was stopped (:meth:`Deadlines.bound`). Registering and clearing
a deadline is a dict operation under a lock: the hot path pays microseconds, not a thread.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable

from controller.errors import GitError


class Deadlines:
    """Kill callbacks due at a time; one daemon thread fires the overdue ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: dict[int, tuple[float, Callable[[], None]]] = {}
        self._ids = itertools.count()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def bound(self, seconds: float, kill: Callable[[], None], what: str) -> _Bound:
        """``with deadlines.bound(...):`` runs the block; when it has not finished
        ``seconds`` from now, ``kill()`` (which must end the wait: kill the child being
        read) and the block ends in ``E_GIT`` saying ``what`` did not answer in time, however
        it ended (a killed child reads as an early end of its output)."""
        return _Bound(self, seconds, kill, what)

    def _watch(self, seconds: float, kill: Callable[[], None]) -> int:
        token = next(self._ids)
        with self._lock:
            self._due[token] = (time.monotonic() + seconds, kill)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="git-deadlines", daemon=True)
                self._thread.start()
        return token

    def _clear(self, token: int) -> None:
        with self._lock:
            self._due.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                overdue = [t for t, (due, _) in self._due.items() if due <= now]
                kills = [self._due.pop(t)[1] for t in overdue]
                nearest = min((due for due, _ in self._due.values()), default=now + 1.0)
            for kill in kills:
                kill()
            self._wake.wait(min(1.0, max(0.01, nearest - time.monotonic())))


class _Bound:
    """One deadline around a block (a class, not a generator: the cold scan enters one per
    tree it reads)."""

    __slots__ = ("deadlines", "fired", "kill", "seconds", "token", "what")

    def __init__(
        self, deadlines: Deadlines, seconds: float, kill: Callable[[], None], what: str
    ) -> None:
        self.deadlines, self.seconds, self.kill, self.what = deadlines, seconds, kill, what
        self.fired = False
        self.token = -1

    def _expire(self) -> None:
        self.fired = True
        with contextlib.suppress(Exception):  # a child that is gone already
            self.kill()

    def __enter__(self) -> None:
        self.token = self.deadlines._watch(self.seconds, self._expire)

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self.deadlines._clear(self.token)
        if self.fired and (kind is None or isinstance(error, Exception)):
            raise GitError(
                f"{self.what} did not answer within {self.seconds:g} s; it was stopped",
                remedy="see whether the repository's file system responds (a FIFO or device "
                "in .git/objects?); raise execution.git_timeout if it needs longer",
            ) from None


#: The process's watchdog (one thread, started by the first deadline).
DEADLINES = Deadlines()
