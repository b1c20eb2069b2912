"""Running a tool's child process: no shell, its own process group, capped output, a deadline.

Shared by the ``exec`` and ``python`` kinds. The child starts a new session, so a timeout can
kill it together with everything it spawned: SIGTERM to the group, a short grace, then SIGKILL
to the group (a child that ignores SIGTERM still dies). Output is read with a selector in the
calling thread; only the first ``limit`` bytes of each stream are kept, the rest is counted and
dropped, so a runaway tool cannot exhaust the controller's memory.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from controller.tools import ToolError

#: Seconds between SIGTERM and SIGKILL when a tool overruns its timeout.
KILL_GRACE = 1.0
_CHUNK = 65_536
_PIPE_BUF = 512


@dataclass
class Finished:
    """A child that ran to its end: exit code and the kept part of its output."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    stdout_total: int
    stderr_total: int


class Overran(Exception):
    """The child did not finish in time; it has been killed."""


class _Capture:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]


def run_process(
    argv: Sequence[str],
    *,
    stdin: bytes,
    env: Mapping[str, str],
    timeout: float,
    limit: int,
    cwd: Path | None = None,
) -> Finished:
    """Run ``argv`` to its end or raise :class:`Overran` after killing its process group."""
    proc = _spawn(argv, env, cwd)
    deadline = time.monotonic() + timeout
    out, err = _Capture(limit), _Capture(limit)
    try:
        _pump(proc, stdin, out, err, deadline)
        proc.wait(max(deadline - time.monotonic(), 0.001))
    except (Overran, subprocess.TimeoutExpired):
        kill_group(proc)
        raise Overran() from None
    except BaseException:
        kill_group(proc)
        raise
    return Finished(proc.returncode, bytes(out.kept), bytes(err.kept), out.total, err.total)


def _spawn(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path | None
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        # A missing program or bad cwd will not fix itself on a retry.
        raise ToolError(f"cannot start {argv[0]!r}: {exc.strerror}", permanent=True) from None


def _pump(
    proc: subprocess.Popen[bytes], data: bytes, out: _Capture, err: _Capture, deadline: float
) -> None:
    assert proc.stdin and proc.stdout and proc.stderr
    sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    with selectors.DefaultSelector() as sel:
        for fd in sinks:
            sel.register(fd, selectors.EVENT_READ)
        if data:
            sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        offset = 0
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Overran()
            for key, _ in sel.select(remaining):
                fd = int(key.fd)
                if fd in sinks:
                    _read(sel, fd, sinks[fd])
                else:
                    offset = _write(sel, proc, data, offset)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if not stream.closed:
            stream.close()


def _read(sel: selectors.BaseSelector, fd: int, sink: _Capture) -> None:
    chunk = os.read(fd, _CHUNK)
    if chunk:
        sink.add(chunk)
    else:
        sel.unregister(fd)


def _write(
    sel: selectors.BaseSelector, proc: subprocess.Popen[bytes], data: bytes, offset: int
) -> int:
    assert proc.stdin is not None
    try:
        offset += os.write(proc.stdin.fileno(), data[offset : offset + _PIPE_BUF])
    except BrokenPipeError:
        # The tool does not read its stdin: that is its business.
        offset = len(data)
    if offset >= len(data):
        sel.unregister(proc.stdin.fileno())
        proc.stdin.close()
    return offset


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group, then SIGKILL it after :data:`KILL_GRACE`."""
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(KILL_GRACE)
    # Members that outlived the leader (or ignored SIGTERM) die too.
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None and not stream.closed:
            stream.close()


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
