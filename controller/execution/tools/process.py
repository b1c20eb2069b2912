"""Running a tool's child process: no shell, its own process group, capped output, a deadline.

Shared by the ``exec`` and ``python`` kinds. The child starts a new session, so a timeout can
kill it together with everything it spawned: SIGTERM to the group, a short grace, then SIGKILL
to the group (a child that ignores SIGTERM still dies). Output is read with a selector in the
calling thread; only the first ``limit`` bytes of each stream are kept, the rest is counted and
dropped, so a runaway tool cannot exhaust the controller's memory.

Right after the child starts, the caller's ``on_spawn`` hears who it is (:class:`Spawned`: pid,
process group, start time, boot id and the call's marker) so the engine can journal it. A
controller that died mid-tool leaves that child running; on recovery :func:`stop_orphan` stops
its group, but only when the pid still names the same process (same boot, same start time),
never one that reused the pid.

Each call's environment carries a marker of its own, :data:`MARKER_ENV` (round 86): a helper
that left the group (``setsid``, ``setpgid``, a double fork into a new session) is no longer
in the group nor, once its parent is gone, below the child; it still carries the environment
it was started with. Every stop (a timeout, an error, the recovery of a dead controller's
run) also SIGKILLs each process of this user whose ``/proc/<pid>/environ`` holds the marker,
until none is left (:func:`stop_marked`). A helper that clears or rewrites its environment
before it execs, and any platform without ``/proc``, is beyond it (docs/threat-model.md).

A scan cannot catch a chain that forks and exits faster than it reads ``/proc`` (round 88,
``forkchurn``): where the host allows it, each call runs in a cgroup v2 of its own
(:mod:`controller.execution.tools.cgroup`), entered before the tool runs any code, journaled
in the spawn record (:attr:`Spawned.cgroup`). Every stop kills it whole (``cgroup.kill``:
every member at once, forks in flight included) and removes it; so does a call's normal end,
which stops a helper the tool left behind. Each of these first sends SIGTERM to every member
and gives it :data:`~controller.execution.tools.cgroup.TERM_GRACE` to end (a ``git`` left
running releases its locks), as a timeout does for the group. The marker scan runs on every
stop all the same.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import selectors
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from controller.execution.tools import ToolError, cgroup

#: Seconds between SIGTERM and SIGKILL when a tool overruns its timeout.
KILL_GRACE = 1.0
#: Seconds a dead controller's left tools get between SIGTERM and SIGKILL at the restart
#: (:func:`stop_orphan`): up to this long while any member of the group still runs.
LEFT_GRACE = 5.0
_CHUNK = 65_536
_PIPE_BUF = 512
_PROC = Path("/proc")
_REAP_POLL = 0.02
#: The environment variable that marks every process of one tool call (round 86).
MARKER_ENV = "PLANGATE_ATTEMPT"
#: Seconds :func:`stop_marked` keeps killing marked processes until none is left.
MARKED_WAIT = 5.0


@dataclass(frozen=True)
class Spawned:
    """Who a tool's child process is, precisely enough to recognise it after a crash.

    ``start_ticks`` (``/proc/<pid>/stat`` field 22) and ``boot_id`` tell this process from a
    later one that reused its pid; both are None where ``/proc`` is not available. ``marker``
    is the call's :data:`MARKER_ENV` value, which every process it started inherits (None in
    a journal written before round 86). ``cgroup`` is the call's own cgroup, as
    ``/proc/<pid>/cgroup`` names it (None where cgroups are not used, or before round 88).
    """

    pid: int
    pgid: int
    start_ticks: int | None
    boot_id: str | None
    marker: str | None = None
    cgroup: str | None = None


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
    on_spawn: Callable[[Spawned], None] | None = None,
) -> Finished:
    """Run ``argv`` to its end or raise :class:`Overran` after killing its process group.

    ``on_spawn`` is told who the child is before it is waited for; if it raises, the child
    is killed and the error propagates. The child's environment carries the call's own
    :data:`MARKER_ENV` (whatever ``env`` says), so every kill also finds the processes that
    left its group.
    """
    marker = new_marker()
    box = cgroup.create(marker)
    try:
        proc = _spawn(argv, {**env, MARKER_ENV: marker}, cwd, box)
    except BaseException:
        if box is not None:
            cgroup.remove(box)
        raise
    deadline = time.monotonic() + timeout
    out, err = _Capture(limit), _Capture(limit)
    try:
        if on_spawn is not None:
            who = identify(proc.pid)
            name = box.name if box is not None else None
            on_spawn(dataclasses.replace(who, marker=marker, cgroup=name))
        _pump(proc, stdin, out, err, deadline)
        proc.wait(max(deadline - time.monotonic(), 0.001))
    except (Overran, subprocess.TimeoutExpired):
        kill_group(proc, marker, box)
        raise Overran() from None
    except BaseException:
        kill_group(proc, marker, box)
        raise
    if box is not None:
        cgroup.remove(box)  # a helper the tool left behind dies with its call
    return Finished(proc.returncode, bytes(out.kept), bytes(err.kept), out.total, err.total)


def _spawn(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path | None, box: cgroup.Box | None
) -> subprocess.Popen[bytes]:
    try:
        if box is not None:
            return cgroup.spawn(box, argv, env, cwd)
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
    except subprocess.SubprocessError as exc:  # the cgroup could not be entered
        raise ToolError(f"cannot start {argv[0]!r}: {exc}") from None


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


def new_marker() -> str:
    """A fresh :data:`MARKER_ENV` value: one tool call's, never another's."""
    return f"{os.getpid()}-{uuid.uuid4().hex}"


def kill_group(
    proc: subprocess.Popen[bytes], marker: str | None = None, box: cgroup.Box | None = None
) -> None:
    """SIGTERM the child's process group, then SIGKILL it after :data:`KILL_GRACE`; and every
    process below the child that left the group (``setsid``: a new session is a new group),
    found by parent pid while the child still lives, dies with it (round 11), as does every
    process that carries the call's ``marker`` (round 86: one whose parent is gone too) and,
    first, every process in the call's cgroup ``box`` (round 88: all at once, then removed)."""
    strays = [identify(pid) for pid in _descendants(proc.pid)]
    _signal_group(proc.pid, signal.SIGTERM)
    if box is not None:
        cgroup.terminate(box)  # the helpers that left the group get the same grace
    ends = time.monotonic() + KILL_GRACE
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(KILL_GRACE)
    if box is not None:
        # the grace is the helpers' too, not only the leader's: a leader that exits at once
        # must not cut short a helper still releasing what it holds (a git's index.lock)
        cgroup.settle(box, ends)
        cgroup.kill(box)
    # Members that outlived the leader (or ignored SIGTERM) die too.
    _signal_group(proc.pid, signal.SIGKILL)
    for stray in strays:
        if _still(stray):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(stray.pid, signal.SIGKILL)
    if marker is not None:
        stop_marked(marker)
    proc.wait()
    if box is not None:
        cgroup.remove(box)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None and not stream.closed:
            stream.close()


def _descendants(root: int) -> list[int]:
    """Every process below ``root`` by parent pid (from /proc; none without it)."""
    children: dict[int, list[int]] = {}
    try:
        entries = [e.name for e in os.scandir(_PROC) if e.name.isdigit()]
    except OSError:
        return []
    for name in entries:
        stat = _stat(int(name))
        if stat is not None and len(stat) > 1 and stat[1].isdigit():
            children.setdefault(int(stat[1]), []).append(int(name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def _still(spawned: Spawned) -> bool:
    """The very process ``identify`` saw (its start time), still running: a pid reused since
    is never signalled."""
    if spawned.start_ticks is None:
        return False
    stat = _stat(spawned.pid)
    return stat is not None and stat[0] != "Z" and int(stat[19]) == spawned.start_ticks


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


# --- orphans: a child left running by a controller that died ----------------------------


def identify(pid: int) -> Spawned:
    """Who ``pid`` is now; a child not yet waited for keeps its pid, so this cannot race."""
    stat = _stat(pid)
    if stat is None:
        # No /proc: the session leader's group id is its pid (start_new_session).
        return Spawned(pid, pid, None, None)
    return Spawned(pid, int(stat[2]), int(stat[19]), boot_id())


@cache
def boot_id() -> str | None:
    """This boot's id: a start time means nothing across a reboot."""
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def is_same_process(spawned: Spawned) -> bool:
    """Whether ``spawned`` still runs (not a zombie) as the very process recorded.

    It must also still be in the recorded group, and that group must not be ours, so the group
    signalled is never someone else's.
    """
    if spawned.start_ticks is None or spawned.boot_id is None:
        return False  # unverifiable: never signal what may be someone else's process
    stat = _stat(spawned.pid)
    if stat is None or stat[0] == "Z" or spawned.pgid == os.getpgrp():
        return False
    same_group = int(stat[2]) == spawned.pgid
    return same_group and int(stat[19]) == spawned.start_ticks and boot_id() == spawned.boot_id


def stop_orphan(spawned: Spawned) -> bool:
    """Stop a recorded child's process group if that very process still runs, and every
    process that carries the call's marker; True if it stopped any.

    SIGTERM to the group, :data:`KILL_GRACE` for the leader to exit, SIGKILL to the group, then
    a short wait until the leader is gone, so a re-run never overlaps it. Then (round 86) the
    marked processes: a helper that left the group, whether or not the child still runs (a
    child that exited while its helper held its output open left the action open as well).
    """
    stopped = _stop_leader(spawned)
    # Round 88: the call's cgroup, every member at once (a chain forking faster than a scan).
    if spawned.cgroup is not None and cgroup.stop_recorded(spawned.cgroup, spawned.marker):
        stopped = True
    if spawned.marker is not None and stop_marked(spawned.marker):
        stopped = True
    return stopped


def _stop_leader(spawned: Spawned) -> bool:
    if not is_same_process(spawned):
        return False
    _signal_group(spawned.pgid, signal.SIGTERM)
    # The grace is every member's, not only the leader's: a leader that exits at once must
    # not cut short a member still releasing what it holds (a left tool's `git commit`
    # removing its index.lock: SIGKILLed a moment after its leader under load, the lock
    # stayed and the restart's pass failed E_GIT). Nobody waits on a dead controller's left
    # tools, so the restart gives them :data:`LEFT_GRACE`.
    deadline = time.monotonic() + LEFT_GRACE
    while (is_same_process(spawned) or _group_lives(spawned.pgid)) and time.monotonic() < deadline:
        time.sleep(_REAP_POLL)
    # Members that outlived the leader (or ignored SIGTERM) die too. The group id is not free
    # for reuse while any member (or the unreaped leader) holds it, and pids are handed out
    # cyclically, so it is not someone else's group a second later.
    _signal_group(spawned.pgid, signal.SIGKILL)
    _wait_gone(spawned, KILL_GRACE)
    return True


def stop_marked(marker: str) -> bool:
    """SIGKILL every process of this user (this one aside) whose environment holds
    ``MARKER_ENV=marker``, again until none is left (one may fork while it is killed), for at
    most :data:`MARKED_WAIT` seconds; True if there was any. A zombie has done all it will."""
    if not marker:
        return False
    needle = f"{MARKER_ENV}={marker}".encode()
    found = False
    deadline = time.monotonic() + MARKED_WAIT
    while True:
        marked = _marked(needle)
        if not marked:
            return found
        found = True
        for pid in marked:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() >= deadline:
            return found
        time.sleep(_REAP_POLL)


def _marked(needle: bytes) -> list[int]:
    """The live (not zombie) processes of this user whose initial environment holds
    ``needle`` as one whole entry; none without ``/proc``."""
    try:
        names = [e.name for e in os.scandir(_PROC) if e.name.isdigit()]
    except OSError:
        return []
    me, uid, found = os.getpid(), os.getuid(), []
    for name in names:
        pid = int(name)
        if pid == me:
            continue
        try:
            if os.stat(_PROC / name).st_uid != uid:
                continue
        except OSError:  # gone
            continue
        if _task_marked(_PROC / name, needle):
            found.append(pid)
    return found


def _task_marked(proc: Path, needle: bytes) -> bool:
    """Does a live thread of the process at ``proc`` carry ``needle``? Its leader's
    environment first; a leader that exited while other threads run (``pthread_exit`` in
    the main thread: round 88, ``zombieleader``) shows state ``Z`` and no environment at
    ``/proc/<pid>``, while its threads keep both under ``task/<tid>``, and a SIGKILL to the
    pid still ends them all."""
    tasks = [proc]
    with contextlib.suppress(OSError):
        tasks += [proc / "task" / e.name for e in os.scandir(proc / "task") if e.name.isdigit()]
    for task in tasks:
        try:
            environ = (task / "environ").read_bytes()
            state = (task / "stat").read_bytes()
        except OSError:  # gone, a zombie leader, or not ours to read
            continue
        if needle in environ.split(b"\0") and state[state.rfind(b")") + 2 :][:1] != b"Z":
            return True
    return False


def _wait_gone(spawned: Spawned, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while is_same_process(spawned) and time.monotonic() < deadline:
        time.sleep(_REAP_POLL)


def _group_lives(pgid: int) -> bool:
    """Does a live (not zombie) process of process group ``pgid`` remain? False without
    ``/proc``."""
    try:
        names = [e.name for e in os.scandir(_PROC) if e.name.isdigit()]
    except OSError:
        return False
    for name in names:
        stat = _stat(int(name))
        if stat is not None and stat[0] != "Z" and int(stat[2]) == pgid:
            return True
    return False


def _stat(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` from field 3 (state) on, or None when there is no such process."""
    try:
        text = (_PROC / str(pid) / "stat").read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself hold ") " and spaces.
    return text[text.rfind(")") + 2 :].split()
