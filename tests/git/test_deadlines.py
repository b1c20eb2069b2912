"""The watchdog of git reads: an overdue read is stopped, whether the watchdog was idle or
ticking among many reads that came and went without waking it."""

from __future__ import annotations

import threading
import time

import pytest

from controller.errors import GitError
from controller.git.deadline import Deadlines


def _hung_read(deadlines: Deadlines) -> bool:
    """A read that waits until it is killed (a hung git): True when the kill ended it."""
    killed = threading.Event()
    with pytest.raises(GitError) as caught, deadlines.bound(0.2, killed.set, "git cat-file"):
        killed.wait(30)  # the hang guard, far beyond the deadline
    assert "git cat-file did not answer within 0.2 s" in caught.value.message
    return killed.is_set()


def test_an_overdue_read_is_stopped_after_many_that_ended_in_time() -> None:
    deadlines = Deadlines()
    for _ in range(10_000):  # a cold scan's reads: none of them wakes the watchdog
        with deadlines.bound(60, lambda: None, "git cat-file"):
            pass
    assert _hung_read(deadlines)
    assert _hung_read(deadlines)


def test_an_overdue_read_is_stopped_after_an_idle_spell() -> None:
    deadlines = Deadlines()
    assert _hung_read(deadlines)
    time.sleep(2.5)  # nothing due for two ticks: the watchdog waits until woken
    assert deadlines._idle
    assert _hung_read(deadlines)


def test_a_read_that_ends_in_time_is_not_stopped() -> None:
    deadlines = Deadlines()
    stopped = threading.Event()
    with deadlines.bound(60, stopped.set, "git cat-file"):
        pass
    time.sleep(0.1)
    assert not stopped.is_set()
