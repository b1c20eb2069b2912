"""A stop signal the kernel hands to a thread other than the daemon's main thread stops it at
once (SPEC §10, docs/operations.md: SIGTERM stops the daemon).

Python runs a signal's handler only in the main thread, once it runs bytecode again. The
daemon's main thread sleeps in ``select()`` on its self-pipe between passes; a SIGTERM taken
by another thread (the file watcher's, the page's listener) ran only the C-level handler there and
woke nothing, so the daemon slept on to its next timer (``resync_interval``, 300 s by default)
before it stopped (CI, 2026-12-06: round 90's lab waited 180 s for its daemon to exit). The
daemon now gives Python its self-pipe as the wakeup fd, written from whichever thread the
signal lands in.

A real ``plangate run`` on a real repository; the signal is sent with ``tgkill`` to one
non-main thread, so the kernel cannot pick the main thread.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

import pytest

from tests.support.daemonkit import running_daemon
from tests.support.gitkit import write_plan

SYS_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


def _tgkill(pid: int, tid: int, signum: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(SYS_TGKILL, pid, tid, signum) != 0:
        raise OSError(ctypes.get_errno(), "tgkill")


@pytest.mark.skipif(SYS_TGKILL is None, reason="tgkill's number is known for x86_64, aarch64")
def test_sigterm_taken_by_another_thread_stops_the_daemon_at_once(
    repo: Path, tmp_path: Path
) -> None:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n"
        "tools: {greet: {kind: echo}}\nexecution: {resync_interval: 3600}\n"
    )
    write_plan(repo)
    with running_daemon(config) as daemon:
        daemon.wait_started()
        pid = daemon.proc.pid
        threads = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
        assert threads, "the daemon runs no other thread"
        time.sleep(0.5)  # between passes: the main thread sleeps in select()
        _tgkill(pid, threads[0], signal.SIGTERM)
        try:
            code = daemon.proc.wait(20)
        except Exception:
            pytest.fail(f"the daemon slept on after SIGTERM:\n{daemon.text()[-1500:]}")
        assert code == 0, daemon.text()[-1500:]
        assert "daemon.stopped" in daemon.text()
