"""Deadlines for the git children this process waits on.

A git command run to completion is bounded by ``subprocess``'s timeout
(:meth:`~controller.git.base.RepoBase.run_raw`). The long-lived ones are not: GitPython's
persistent ``cat-file``, the cold scan's ``cat-file --batch`` streams and ``git log``. A read
from one of them waits for as long as git does, and git waits for ever on a FIFO in the
object store or a stalled file system. So every such wait registers a deadline here; one
watchdog thread kills the child whose answer is overdue, the read ends, and the caller turns
it into ``E_GIT`` naming what was stopped (:meth:`Deadlines.bound`). Registering and clearing
a deadline is a dict operation under a lock: the hot path pays microseconds, not a thread.
Nor a wake-up of the watchdog: while deadlines come and go it ticks once a second (and a
second more after the last one), so only the first deadline after an idle spell wakes it (a
cold scan reads 100,000 objects, each under its own deadline: a wake-up each cost 2 s).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable

from controller.errors import GitError


class Deadlines:
    """Blocks due to end by a time; one daemon thread kills what an overdue one waits on.

    A block's entry leaves the table exactly once, under the lock: either its block ended
    first (nothing is killed), or the watchdog took it as overdue (its kill runs, and the
    block's end waits for the kill to finish, so no later read meets a child half killed).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: dict[int, tuple[float, _Bound]] = {}
        self._ids = itertools.count()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        #: The watchdog waits with no timeout (nothing was due at its last two ticks): the
        #: next deadline must wake it. Otherwise it ticks within a second and finds it.
        self._idle = True

    def bound(self, seconds: float, kill: Callable[[], None], what: str) -> _Bound:
        """``with deadlines.bound(...):`` runs the block; when it has not finished
        ``seconds`` from now, ``kill()`` (which must end the wait: kill the child being
        read) and the block ends in ``E_GIT`` saying ``what`` did not answer in time, however
        it ended (a killed child reads as an early end of its output)."""
        return _Bound(self, seconds, kill, what)

    def _watch(self, bound: _Bound) -> int:
        token = next(self._ids)
        with self._lock:
            self._due[token] = (time.monotonic() + bound.seconds, bound)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="git-deadlines", daemon=True)
                self._thread.start()
            elif self._idle:
                self._idle = False
                self._wake.set()  # the thread sleeps for good while nothing is due
        return token

    def _clear(self, token: int) -> bool:
        """True when the block ended before its deadline was taken."""
        with self._lock:
            return self._due.pop(token, None) is not None

    def _run(self) -> None:
        """Fire what is overdue; sleep until the nearest deadline, at most a second (a
        deadline added meanwhile, which does not wake this thread, is found at the next
        tick); with none due at two ticks in a row, until one is added (which wakes it): an
        idle daemon spends no CPU here."""
        empty_ticks = 0
        while True:
            with self._lock:
                now = time.monotonic()
                fired = [b for t, (due, b) in list(self._due.items()) if due <= now]
                for bound in fired:
                    self._due = {t: e for t, e in self._due.items() if e[1] is not bound}
                    bound.killed = threading.Event()
                nearest = min((due for due, _ in self._due.values()), default=None)
                empty_ticks = empty_ticks + 1 if nearest is None else 0
                idle = self._idle = empty_ticks > 1
                self._wake.clear()
            for bound in fired:
                with contextlib.suppress(Exception):  # a child that is gone already
                    bound.kill()
                assert bound.killed is not None
                bound.killed.set()
            if idle:
                self._wake.wait()
            elif nearest is None:
                self._wake.wait(1.0)
            else:
                self._wake.wait(min(1.0, max(0.01, nearest - time.monotonic())))


class _Bound:
    """One deadline around a block (a class, not a generator: the cold scan enters one per
    tree it reads)."""

    __slots__ = ("deadlines", "kill", "killed", "seconds", "token", "what")

    def __init__(
        self, deadlines: Deadlines, seconds: float, kill: Callable[[], None], what: str
    ) -> None:
        self.deadlines, self.seconds, self.kill, self.what = deadlines, seconds, kill, what
        #: Set by the watchdog when it took the deadline; set() once the kill returned.
        self.killed: threading.Event | None = None
        self.token = -1

    def __enter__(self) -> None:
        self.token = self.deadlines._watch(self)

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if self.deadlines._clear(self.token):
            return  # ended in time
        if self.killed is not None:
            self.killed.wait(60)
        if kind is None or isinstance(error, Exception):
            raise GitError(
                f"{self.what} did not answer within {self.seconds:g} s; it was stopped",
                remedy="see whether the repository's file system responds (a FIFO or device "
                "in .git/objects?); raise execution.git_timeout if it needs longer",
            ) from None


#: The process's watchdog (one thread, started by the first deadline).
DEADLINES = Deadlines()
