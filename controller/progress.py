"""Progress of long work (a cold history scan, ``run --once`` over many plans).

On a terminal: one line on stderr, rewritten in place at most a few times a second. Otherwise
(systemd, CI, pipes): structured ``progress`` log events (``task``, ``done``, ``total``), at
most one per second per task plus the last one, so logs stay readable and parseable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from controller.logs import get_logger

INTERVAL_TTY = 0.2
INTERVAL_LOG = 1.0


class Progress:
    """Callable as ``progress(task, done, total)``; ``close()`` ends the terminal line."""

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self._last: dict[str, float] = {}
        self._open = False
        self.log = get_logger("plangate.progress")

    def __call__(self, task: str, done: int, total: int | None = None) -> None:
        now = time.monotonic()
        finished = total is not None and done >= total
        interval = INTERVAL_TTY if self.tty else INTERVAL_LOG
        if not finished and now - self._last.get(task, 0.0) < interval:
            return
        self._last[task] = now
        if self.tty:
            of = f"/{total}" if total is not None else ""
            self.stream.write(f"\r\033[K{task}: {done}{of}")
            self.stream.flush()
            self._open = True
            if finished:
                self.close()
        else:
            self.log.info("progress", task=task, done=done, total=total)

    def close(self) -> None:
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
