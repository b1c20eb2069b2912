"""Each tool call in a cgroup v2 of its own: containment no descendant can leave (round 88).

A scan of ``/proc`` for the call's marker (:func:`controller.execution.tools.process.stop_marked`)
cannot catch a chain whose every member forks a child and exits faster than the scan reaches
it (round 88, ``forkchurn``). A cgroup can: every process a member starts is born in it, no
process of the tool's user can move out of it (that takes write access to the ``cgroup.procs``
of a common ancestor: the controller's own cgroup), and ``cgroup.kill`` SIGKILLs every member
at once, forks in flight included. Before that kill every member gets SIGTERM and
:data:`TERM_GRACE` to end on its own (:func:`terminate`): a ``git`` a tool left running
removes its lock files then, where a SIGKILL would leave ``.git/index.lock`` behind and stop
every later commit in that repository, the controller's own included.

Where: the controller's own cgroup v2 (``0::<path>`` in ``/proc/self/cgroup``, under the
``cgroup2`` mount read from ``/proc/self/mountinfo``) gets one child per call,
``plangate-<marker>``, named from the call's :data:`~process.MARKER_ENV` value. No domain
controller is enabled anywhere (the no-internal-processes rule only binds a cgroup that
distributes a controller to its children), so the controller may stay in its own cgroup
beside them; under systemd that cgroup must be delegated (``Delegate=yes``,
docs/operations.md).

The tool is inside before any of its own code runs: it is started through ``/bin/sh -c`` with
a fixed script (the tool's argv are positional parameters, never parsed) that writes ``0`` to
the call's ``cgroup.procs`` (moving itself) and then ``exec``\\ s the tool, so Python keeps its
fast spawn path (vfork); dash's changes to the environment are undone (``PWD`` restored or
unset). A program this does not suit exactly (not found, not an ELF file or a ``#!``
script, an interpreter that cannot run, a path with ``=``), or an environment dash would not
pass on as it is (names that are no shell variable, or ``IFS``/``PPID``/``OPTIND``), is
started by ``subprocess`` itself with a ``preexec_fn`` that joins the cgroup: a full fork,
slower, but the same errors as before. The shim's command line (``/proc/<pid>/cmdline``,
readable by every process) holds the call's cgroup, ``PWD`` and the tool's own argv, nothing
else: never the environment (round 128: the ``env -i NAME=VALUE...`` this used before put a
catalog ``env`` credential there), and never a secret a reference brought into the argv (the
exec tool refuses that call before anything starts). The tool's ``argv[0]`` is the
program's path as resolved from ``PATH`` (dash cannot set it apart).

Where cgroups cannot be had (not Linux, no cgroup v2 hierarchy, not writable, no
``cgroup.kill`` before Linux 5.14, or :data:`SWITCH` ``=off``) every call runs as before with
the marker scan alone; :func:`announce` says so once at start-up.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import signal
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

#: ``PLANGATE_TOOL_CGROUPS=off`` in the controller's environment: no cgroups, the marker scan
#: alone (as on a host without cgroup v2).
SWITCH = "PLANGATE_TOOL_CGROUPS"
#: Every per-call cgroup's name starts with this, then the call's marker.
PREFIX = "plangate-"
#: Seconds to wait for a killed cgroup to empty before it is removed.
EMPTY_WAIT = 5.0
#: Seconds a process still in a call's cgroup has, after SIGTERM, to end on its own before
#: ``cgroup.kill``: a ``git commit`` a tool left running removes its ``index.lock`` (a SIGKILL
#: would leave the lock behind and stop every later commit in that repository).
TERM_GRACE = 1.0
_SH = "/bin/sh"
_JOIN = 'echo 0 2>/dev/null >"$0" || { echo "plangate: cannot enter cgroup $0" >&2; exit 125; }; '
_PLAIN = _JOIN + 'unset PWD; exec "$@"'
_WITH_PWD = _JOIN + 'PWD=$1; shift; exec "$@"'
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Variables dash sets whatever its environment says.
_DASH_OWN = frozenset({"IFS", "PPID", "OPTIND"})
_POLL = 0.005


@dataclass(frozen=True)
class Support:
    """Whether per-call cgroups are used: ``mount`` (the cgroup2 mount) and ``own`` (this
    process's cgroup, as ``/proc/self/cgroup`` names it) when found; ``why`` not None when
    cgroups are not used (the marker scan alone)."""

    mount: Path | None
    own: str | None
    why: str | None


@dataclass(frozen=True)
class Box:
    """One call's cgroup: ``name`` as ``/proc/<pid>/cgroup`` reads it (journaled), ``path``
    its directory."""

    name: str
    path: Path


@functools.cache
def support() -> Support:
    """Found once per process (a probe cgroup is made, joined by a real process, removed)."""
    mount, own = _mount(), _own()
    if sys.platform != "linux":
        return Support(None, None, f"not Linux ({sys.platform})")
    switch = os.environ.get(SWITCH, "").strip().lower()
    if switch in ("off", "0", "no", "false"):
        return Support(mount, own, f"{SWITCH}={switch}")
    if mount is None or own is None:
        return Support(mount, own, "no cgroup v2 hierarchy (/proc/self/cgroup, mountinfo)")
    why = _probe(mount, own)
    return Support(mount, own, why)


def announce() -> None:
    """Log once, at start-up, how tool calls are contained."""
    found = support()
    log = structlog.get_logger("plangate")
    if found.why is None:
        log.debug("tools.containment", cgroup=found.own, mode="cgroup", swept=sweep())
        return
    log.warning(
        "tools.containment",
        mode="marker",
        reason=found.why,
        note="no cgroup for tool calls: a helper that forks and exits faster than the "
        "marker scan may outlive a stop (docs/execution.md)",
    )


def sweep() -> int:
    """Remove the EMPTY per-call cgroups left below ours by controllers that are gone (the
    pid the marker starts with runs no more: one killed between making a call's cgroup and
    journaling it, or whose run was never recovered); how many. A cgroup that still holds a
    process is left to the journal's recovery; a live controller's is never touched."""
    found = support()
    if found.why is not None or found.mount is None or found.own is None:
        return 0
    parent = found.mount / found.own.lstrip("/")
    removed = 0
    try:
        names = [e.name for e in os.scandir(parent) if e.name.startswith(PREFIX)]
    except OSError:
        return 0
    for name in names:
        pid = name[len(PREFIX) :].removeprefix("probe-").split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            _rmdir_tree(parent / name)  # EBUSY while it holds a process: left alone
            removed += 1
    return removed


def _rmdir_tree(path: Path) -> None:
    """Remove the cgroup ``path`` and every cgroup a tool made below it, the deepest first (a
    cgroup with a child cannot be removed: round 90, ``cgleft``); OSError (EBUSY) while any
    of them holds a process. A cgroup's own files go with its folder."""
    for folder, _subdirs, _files in os.walk(path, topdown=False):
        if folder != str(path):
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(folder)
    os.rmdir(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def create(marker: str) -> Box | None:
    """A fresh empty cgroup for the call with ``marker``; None where cgroups are not used (or
    this one cannot be made: the call then has the marker scan alone, and a warning)."""
    found = support()
    if found.why is not None or found.mount is None or found.own is None:
        return None
    name = f"{found.own.rstrip('/')}/{PREFIX}{marker}"
    path = found.mount / name.lstrip("/")
    try:
        os.mkdir(path)
    except OSError as exc:
        structlog.get_logger("plangate").warning(
            "tools.cgroup_failed", cgroup=name, error=exc.strerror
        )
        return None
    return Box(name, path)


def spawn(
    box: Box, argv: Sequence[str], env: Mapping[str, str], cwd: Path | None
) -> subprocess.Popen[bytes]:
    """Start ``argv`` inside ``box`` before it runs any code of its own (see the module)."""
    procs = str(box.path / "cgroup.procs")
    wrap: list[str] | None = None
    # An environment dash would not pass on as it is (a name that is no shell variable, or
    # IFS/PPID/OPTIND, which dash sets) takes the preexec_fn path below: never through
    # ``env -i NAME=VALUE...``, whose arguments put the environment (a catalog env
    # credential) on a command line every process can read (round 128).
    as_given = all(_NAME.match(k) for k in env) and not _DASH_OWN.intersection(env)
    program = _direct(argv[0], env, cwd) if as_given else None
    if program is not None:
        if "PWD" in env:
            wrap = [_SH, "-c", _WITH_PWD, procs, env["PWD"], program, *argv[1:]]
        else:
            wrap = [_SH, "-c", _PLAIN, procs, program, *argv[1:]]
    common: dict[str, Any] = {
        "stdin": subprocess.PIPE,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "cwd": cwd,
        "start_new_session": True,
        "close_fds": True,
    }
    if wrap is not None:
        return subprocess.Popen(wrap, env=dict(env), **common)
    return subprocess.Popen(
        list(argv), env=dict(env), preexec_fn=functools.partial(_enter, procs), **common
    )


def _enter(procs: str) -> None:  # pragma: no cover - runs in the forked child
    fd = os.open(procs, os.O_WRONLY)
    try:
        os.write(fd, b"0")
    finally:
        os.close(fd)


def _direct(name: str, env: Mapping[str, str], cwd: Path | None) -> str | None:
    """The program ``exec`` would run for ``name`` (as ``subprocess`` finds it: through the
    environment's ``PATH`` unless it holds a ``/``), when the shim runs it exactly as
    ``subprocess`` would (an executable ELF file or ``#!`` script whose interpreter can run);
    None otherwise."""
    if not name or "=" in name:
        return None
    if "/" in name:
        found = name
    else:
        found = next((c for c in _candidates(name, env) if _runnable(c, cwd)), "")
        if not found:
            return None
        if "/" not in found:
            found = "./" + found
    full = found if cwd is None or os.path.isabs(found) else os.path.join(cwd, found)
    if not _runnable(found, cwd):
        return None
    try:
        with open(full, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if head[:4] == b"\x7fELF":
        return found
    if head[:2] != b"#!" or b"\n" not in head:
        return None
    words = head[2 : head.index(b"\n")].split()
    interp = os.fsdecode(words[0]) if words else ""
    return found if interp.startswith("/") and _runnable(interp, None) else None


def _candidates(name: str, env: Mapping[str, str]) -> list[str]:
    return [os.path.join(d, name) for d in os.get_exec_path(dict(env))]


def _runnable(path: str, cwd: Path | None) -> bool:
    full = path if cwd is None or os.path.isabs(path) else os.path.join(cwd, path)
    try:
        return stat.S_ISREG(os.stat(full).st_mode) and os.access(full, os.X_OK)
    except (OSError, ValueError):
        return False


# --- stops ---------------------------------------------------------------------------------


def kill(box: Box) -> None:
    """SIGKILL every process in ``box`` at once (``cgroup.kill``)."""
    with contextlib.suppress(OSError):
        _write(box.path / "cgroup.kill", b"1")


def terminate(box: Box) -> int:
    """SIGTERM every process in ``box`` and the cgroups below it; how many were signalled.

    Each is signalled through a pidfd opened before its membership is read again from
    ``/proc/<pid>/cgroup``, so a pid that ended and was reused by a process outside the box
    in between is never signalled."""
    signalled = 0
    for pid in _members(box.path):
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue  # gone already
        try:
            if _in_box(pid, box.name):
                signal.pidfd_send_signal(fd, signal.SIGTERM)
                signalled += 1
        except OSError:
            pass  # ended in between
        finally:
            os.close(fd)
    return signalled


def _members(path: Path) -> list[int]:
    pids: list[int] = []
    for folder, _subdirs, _files in os.walk(path):
        with contextlib.suppress(OSError):
            text = (Path(folder) / "cgroup.procs").read_text()
            pids.extend(int(line) for line in text.split() if line.isdigit())
    return pids


def _in_box(pid: int, name: str) -> bool:
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("0::"):
            where = line[3:]
            return where == name or where.startswith(name.rstrip("/") + "/")
    return False


def _populated(box: Box) -> bool:
    try:
        return b"populated 1" in (box.path / "cgroup.events").read_bytes()
    except OSError:
        return False


def settle(box: Box, until: float) -> bool:
    """Wait until every process in ``box`` has ended or the monotonic time ``until``; True
    if it is empty."""
    while _populated(box):
        if time.monotonic() >= until:
            return False
        time.sleep(_POLL)
    return True


def remove(box: Box, wait: float = EMPTY_WAIT, grace: float = TERM_GRACE) -> bool:
    """Stop what is left in ``box`` (SIGTERM, up to ``grace`` seconds to end, then SIGKILL to
    the rest), wait until it is empty, remove it; False if it would not empty in ``wait``
    seconds (left in place, a warning)."""
    with contextlib.suppress(OSError):
        os.rmdir(box.path)  # empty already (the common case: one syscall)
        return True
    if grace > 0 and terminate(box):
        settle(box, time.monotonic() + grace)
    kill(box)  # every process of the subtree, cgroups the tool made below included
    deadline = time.monotonic() + wait
    while True:
        try:
            _rmdir_tree(box.path)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                structlog.get_logger("plangate").warning(
                    "tools.cgroup_left", cgroup=box.name, error=exc.strerror
                )
                return False
        time.sleep(_POLL)


def stop_recorded(name: str, marker: str | None) -> bool:
    """Kill and remove the cgroup a journal's spawn record names (a dead controller's call);
    True if it held any process. Only a cgroup of this scheme (``plangate-<marker>``) under
    the cgroup2 mount is ever touched."""
    found = support()
    if found.mount is None or not marker or not name.startswith("/"):
        return False
    parts = name.split("/")
    if parts[-1] != PREFIX + marker or any(p in (".", "..") for p in parts):
        return False
    box = Box(name, found.mount / name.lstrip("/"))
    try:
        had = b"populated 1" in (box.path / "cgroup.events").read_bytes()
    except OSError:
        return False  # gone (a reboot, a removal): nothing of it runs
    remove(box)
    return had


# --- what this host offers -----------------------------------------------------------------


def _own() -> str | None:
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("0::"):
            return line[3:] or "/"
    return None


def _mount() -> Path | None:
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        head, sep, tail = line.partition(" - ")
        fields = head.split()
        if sep and tail.split()[:1] == ["cgroup2"] and len(fields) > 4 and fields[3] == "/":
            return Path(_unescape(fields[4]))
    return None


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _probe(mount: Path, own: str) -> str | None:
    """None if a child cgroup can be made here, entered by a process, killed and removed."""
    box = Box(f"{own.rstrip('/')}/{PREFIX}probe-{os.getpid()}-{uuid.uuid4().hex}", mount)
    box = Box(box.name, mount / box.name.lstrip("/"))
    try:
        os.mkdir(box.path)
    except OSError as exc:
        return f"cannot create a cgroup under {box.path.parent}: {exc.strerror}"
    try:
        if not (box.path / "cgroup.kill").exists():
            return "no cgroup.kill (Linux before 5.14)"
        if not os.access(_SH, os.X_OK):
            return f"no {_SH}"
        argv = [_SH, "-c", _PLAIN, str(box.path / "cgroup.procs"), _SH, "-c", "exit 0"]
        done = subprocess.run(argv, env={}, capture_output=True, timeout=30, check=False)
        if done.returncode != 0:
            return (
                f"cannot move a process into {box.path}: "
                + done.stderr.decode("utf-8", "replace").strip()[-200:]
            )
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cgroup probe failed: {exc}"
    finally:
        remove(box, 1.0)


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
