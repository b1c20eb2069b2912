"""Taking the state directory's lock right after its holder died (round 108 lab K, seen in CI
under load): a SIGKILLed daemon's forked child still held the inherited lock descriptor for
a moment, and the next ``run --once`` failed ``E_LOCKED`` naming the dead daemon. A start now
waits (at most ``LOCK_SETTLE``) while the noted holder is a dead process of this host; a live
holder is refused at once, as before.

Real processes holding a real ``flock``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from controller.errors import Locked
from controller.service.statedir import LOCK_NAME, StateDir

HOLD = """\
import fcntl, sys, time
f = open(sys.argv[1], "a")
fcntl.flock(f.fileno(), fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def hold(lock: Path, seconds: float) -> subprocess.Popen[str]:
    """A process holding ``lock`` for ``seconds`` (as a child holding an inherited
    descriptor does), once it printed ``held``."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


def test_a_dead_holders_lock_is_taken_once_its_descriptor_is_closed(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state").ensure()
    lock = state.path / LOCK_NAME
    lock.write_text(f"pid={dead_pid()} host={socket.gethostname()}\n")
    holder = hold(lock, 0.5)
    try:
        state.acquire()  # E_LOCKED at once before: the note named a dead process
        assert lock.read_text() == f"pid={os.getpid()} host={socket.gethostname()}\n"
        assert holder.wait(timeout=30) == 0  # it held the lock to its end: nothing broke it
    finally:
        state.release()
        holder.wait()


def test_a_live_holder_is_refused_at_once(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state").ensure()
    lock = state.path / LOCK_NAME
    holder = hold(lock, 30)
    lock.write_text(f"pid={holder.pid} host={socket.gethostname()}\n")
    try:
        with pytest.raises(Locked, match=f"held by pid={holder.pid} "):
            state.acquire()
        assert holder.poll() is None  # refused while it still held the lock
    finally:
        holder.kill()
        holder.wait()
