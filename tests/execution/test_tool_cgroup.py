"""Each tool call in a cgroup v2 of its own (round 88, forkchurn), and the marker fallback.

Real processes and the real cgroup filesystem: a helper that double-forks into a new session
and then forks and exits over and over (faster than a ``/proc`` scan) dies with its call at a
timeout, at the call's normal end, and at the recovery of a SIGKILLed controller (the spawn
record's ``cgroup``). The environment and argv the tool sees are the ones it was given. With
``PLANGATE_TOOL_CGROUPS=off`` no cgroup is made and the marker scan still stops a helper that
left the group.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.execution.tools import ToolError, cgroup
from controller.execution.tools.process import (
    MARKER_ENV,
    Overran,
    Spawned,
    run_process,
    stop_orphan,
)

CONTAINED = pytest.mark.skipif(
    cgroup.support().why is not None, reason=f"no cgroups here: {cgroup.support().why}"
)

#: A tool: starts a helper (double fork, new session) that writes its pid, then forks a fresh
#: child and exits over and over (``churn``) or just waits (``wait``), writing ``late`` if it
#: lives ``linger`` seconds; the tool then exits (``exit``) or waits (``hang``).
TOOL = r"""
import os, sys, time
out, helper, tool = sys.argv[1], sys.argv[2], sys.argv[3]
linger = float(sys.argv[4])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for n in (0, 1, 2):
            os.dup2(os.open(os.devnull, os.O_RDWR), n)
        open(os.path.join(out, "helper"), "w").write(str(os.getpid()))
        t0 = time.time()
        while time.time() - t0 < linger:
            if helper == "churn" and os.fork():
                os._exit(0)
            time.sleep(0.001 if helper == "churn" else 0.05)
        open(os.path.join(out, "late"), "w").write(str(os.getpid()))
        os._exit(0)
    os._exit(0)
os.wait()
for _ in range(400):
    if os.path.exists(os.path.join(out, "helper")):
        break
    time.sleep(0.01)
if tool == "hang":
    time.sleep(60)
print("done")
"""


@pytest.fixture()
def tool(tmp_path: Path) -> Path:
    path = tmp_path / "tool.py"
    path.write_text(TOOL)
    return path


@pytest.fixture()
def fallback() -> Iterator[None]:
    """The marker scan alone, as on a host without cgroup v2 (the controller's switch)."""
    before = os.environ.get(cgroup.SWITCH)
    os.environ[cgroup.SWITCH] = "off"
    cgroup.support.cache_clear()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(cgroup.SWITCH, None)
        else:
            os.environ[cgroup.SWITCH] = before
        cgroup.support.cache_clear()


def _env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def _marked(marker: str) -> list[int]:
    needle = f"{MARKER_ENV}={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                env = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
                state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if needle in env and state != b"Z":
                found.append(int(name))
    return found


def _settled(out: Path, linger: float) -> None:
    time.sleep(linger + 1.0)  # long enough for a survivor to write ``late``
    assert not (out / "late").exists(), "a helper of the stopped call acted"


def _box_path(name: str) -> Path:
    mount = cgroup.support().mount
    assert mount is not None
    return mount / name.lstrip("/")


@CONTAINED
def test_timeout_kills_a_fork_churn(tool: Path, tmp_path: Path) -> None:
    seen: list[Spawned] = []
    argv = [sys.executable, str(tool), str(tmp_path), "churn", "hang", "3"]
    with pytest.raises(Overran):
        run_process(argv, stdin=b"", env=_env(), timeout=1.5, limit=4096, on_spawn=seen.append)
    spawned = seen[0]
    assert spawned.cgroup is not None and spawned.marker is not None
    assert spawned.cgroup.endswith("/" + cgroup.PREFIX + spawned.marker)
    assert (tmp_path / "helper").exists()
    assert not _box_path(spawned.cgroup).exists()
    assert _marked(spawned.marker) == []
    _settled(tmp_path, 3)


@CONTAINED
def test_normal_end_kills_a_helper_left_behind(tool: Path, tmp_path: Path) -> None:
    seen: list[Spawned] = []
    argv = [sys.executable, str(tool), str(tmp_path), "wait", "exit", "3"]
    done = run_process(argv, stdin=b"", env=_env(), timeout=30, limit=4096, on_spawn=seen.append)
    assert done.exit_code == 0 and done.stdout == b"done\n"
    assert seen[0].cgroup is not None and seen[0].marker is not None
    assert not _box_path(seen[0].cgroup).exists()
    assert _marked(seen[0].marker) == []
    _settled(tmp_path, 3)


@CONTAINED
def test_recovery_kills_the_recorded_cgroup(tool: Path, tmp_path: Path) -> None:
    """A controller SIGKILLed mid-call: the spawn record's cgroup is killed whole."""
    record = tmp_path / "spawn.json"
    driver = (
        "import dataclasses, json, sys\n"
        "from controller.execution.tools.process import run_process\n"
        f"def seen(s):\n    open({str(record)!r}, 'w').write(json.dumps(dataclasses.asdict(s)))\n"
        f"run_process({[sys.executable, str(tool), str(tmp_path), 'churn', 'hang', '4']!r},"
        " stdin=b'', env={'PATH': '/usr/bin:/bin'}, timeout=60, limit=4096, on_spawn=seen)\n"
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", driver], cwd=root, start_new_session=True)
    try:
        for _ in range(600):
            if (tmp_path / "helper").exists() and record.exists():
                break
            time.sleep(0.02)
        time.sleep(0.3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    spawned = Spawned(**json.loads(record.read_text()))
    assert spawned.cgroup is not None and spawned.marker is not None
    assert _marked(spawned.marker), "the orphaned helper chain runs before the recovery"
    assert stop_orphan(spawned)
    assert not _box_path(spawned.cgroup).exists()
    assert _marked(spawned.marker) == []
    _settled(tmp_path, 4)


@CONTAINED
def test_recorded_cgroup_of_another_scheme_is_never_touched(tmp_path: Path) -> None:
    """A journal can only name ``plangate-<its marker>``: nothing else is killed or removed."""
    mount = cgroup.support().mount
    assert mount is not None
    other = mount / f"r88-other-{os.getpid()}"
    other.mkdir()
    try:
        spawned = Spawned(1, 1, None, None, "m1", "/" + other.name)
        assert not stop_orphan(spawned)
        assert other.exists()
        assert not cgroup.stop_recorded(f"/{cgroup.PREFIX}m1/../{other.name}", "m1")
        assert other.exists()
    finally:
        other.rmdir()


@CONTAINED
@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"PWD": "/nowhere"},
        {"IFS": "x", "PPID": "7", "OPTIND": "9", "A-B": "1", "a.b": "2", "é": "3"},
    ],
    ids=["plain", "pwd", "dash-own"],
)
def test_the_tool_sees_its_environment_and_argv(tmp_path: Path, extra: dict[str, str]) -> None:
    argv = [
        sys.executable,
        "-c",
        "import json, os, sys; print(json.dumps([sys.argv[1:], dict(os.environ), "
        "open('/proc/self/cgroup').read()]))",
        "a b",
        "$HOME",
        "'; echo x",
    ]
    env = {**_env(), "X": "1", **extra}
    seen: list[Spawned] = []
    done = run_process(argv, stdin=b"", env=env, timeout=30, limit=65536, on_spawn=seen.append)
    args, got, groups = json.loads(done.stdout)
    assert args == argv[3:]
    got.pop("LC_CTYPE", None)  # Python's own locale coercion (PEP 538), in the tool
    assert got == {**env, MARKER_ENV: seen[0].marker}
    assert f"0::{seen[0].cgroup}\n" in groups


@CONTAINED
@pytest.mark.parametrize("odd", [{}, {"A-B": "1"}, {"IFS": "x"}], ids=["plain", "name", "ifs"])
def test_the_shims_command_line_holds_no_environment(odd: dict[str, str]) -> None:
    """Round 128: the shim's argv (and ``env -i``'s, which it used for an environment dash
    would not pass on) is ``/proc/<pid>/cmdline``, readable by every process: the
    environment (a catalog ``env`` credential) never goes there, whatever its names."""
    box = cgroup.create(f"t128-{os.getpid()}")
    assert box is not None
    env = {**_env(), "API_TOKEN": "Cred-Value-7Hq2", **odd}
    try:
        proc = cgroup.spawn(box, ["/bin/true", "x"], env, None)
        proc.communicate(timeout=30)
        args = [str(a) for a in proc.args]  # type: ignore[union-attr]
        assert not [a for a in args if "Cred-Value-7Hq2" in a], args
        assert proc.returncode == 0
    finally:
        assert cgroup.remove(box)


@CONTAINED
def test_a_program_that_cannot_start_is_still_a_permanent_error(tmp_path: Path) -> None:
    plain = tmp_path / "noshebang"
    plain.write_text("echo hi\n")
    plain.chmod(0o755)
    for program in ("no-such-program-r88", str(plain)):
        with pytest.raises(ToolError) as info:
            run_process([program], stdin=b"", env=_env(), timeout=10, limit=100)
        assert info.value.permanent and "cannot start" in info.value.message
    leftover = [p for p in os.listdir(cgroup.support().mount or "/") if str(os.getpid()) in p]
    assert leftover == []


def test_fallback_without_cgroups_still_stops_a_helper(
    fallback: None, tool: Path, tmp_path: Path
) -> None:
    assert cgroup.support().why == f"{cgroup.SWITCH}=off"
    seen: list[Spawned] = []
    argv = [sys.executable, str(tool), str(tmp_path), "wait", "hang", "3"]
    with pytest.raises(Overran):
        run_process(argv, stdin=b"", env=_env(), timeout=1.5, limit=4096, on_spawn=seen.append)
    assert seen[0].cgroup is None and seen[0].marker is not None
    assert (tmp_path / "helper").exists()
    assert _marked(seen[0].marker) == []
    _settled(tmp_path, 3)


def test_fallback_normal_end_leaves_the_marker_scan_to_stops(
    fallback: None, tool: Path, tmp_path: Path
) -> None:
    """Without a cgroup a call's normal end kills nothing (as before round 88)."""
    seen: list[Spawned] = []
    argv = [sys.executable, str(tool), str(tmp_path), "wait", "exit", "1"]
    done = run_process(argv, stdin=b"", env=_env(), timeout=30, limit=4096, on_spawn=seen.append)
    assert done.exit_code == 0 and seen[0].cgroup is None
    assert dataclasses.replace(seen[0], cgroup=None) == seen[0]
    for _ in range(300):
        if (tmp_path / "late").exists():
            break
        time.sleep(0.01)
    assert (tmp_path / "late").exists()


@CONTAINED
def test_start_up_sweeps_empty_cgroups_of_gone_controllers(tmp_path: Path) -> None:
    """An empty ``plangate-<pid>-...`` whose controller pid is gone is removed; one of a live
    controller, or one that holds a process, is not."""
    mount, own = cgroup.support().mount, cgroup.support().own
    assert mount is not None and own is not None
    parent = mount / own.lstrip("/")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    names = [f"{cgroup.PREFIX}{gone.pid}-r88sweep", f"{cgroup.PREFIX}{live.pid}-r88sweep"]
    held = parent / f"{cgroup.PREFIX}{gone.pid}-r88held"
    try:
        for name in names:
            (parent / name).mkdir()
        held.mkdir()
        (held / "cgroup.procs").write_text(str(live.pid))
        assert cgroup.sweep() >= 1
        assert not (parent / names[0]).exists()
        assert (parent / names[1]).exists() and held.exists()
    finally:
        live.kill()
        live.wait()
        for path in (parent / names[1], held):
            for _ in range(200):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


#: A tool that leaves a helper in a new session, which on SIGTERM writes ``termed`` and exits
#: (``polite``) or ignores SIGTERM (``deaf``); the tool then exits (``exit``) or hangs
#: (``hang``). The helper writes ``late`` if it lives 20 s.
POLITE = r"""
import os, signal, sys, time
out, kind, tool = sys.argv[1], sys.argv[2], sys.argv[3]
if os.fork() == 0:
    os.setsid()
    for n in (0, 1, 2):
        os.dup2(os.open(os.devnull, os.O_RDWR), n)
    def termed(*_):
        open(os.path.join(out, "termed"), "w").write(str(os.getpid()))
        os._exit(0)
    signal.signal(signal.SIGTERM, termed if kind == "polite" else signal.SIG_IGN)
    open(os.path.join(out, "helper"), "w").write(str(os.getpid()))
    time.sleep(20)
    open(os.path.join(out, "late"), "w").write(str(os.getpid()))
    os._exit(0)
for _ in range(6000):  # its handler is set (a loaded host may be slow)
    if os.path.exists(os.path.join(out, "helper")):
        break
    time.sleep(0.01)
if tool == "hang":
    time.sleep(60)
print("done")
"""


def _polite(tmp_path: Path, kind: str, tool: str) -> list[str]:
    path = tmp_path / "polite.py"
    path.write_text(POLITE)
    return [sys.executable, str(path), str(tmp_path), kind, tool]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return True
    return state == b"Z"


@CONTAINED
def test_normal_end_gives_a_helper_its_sigterm_first(tmp_path: Path) -> None:
    """A helper left behind is stopped as a timeout stops a group: SIGTERM, a grace, and
    only then SIGKILL, so it can release what it holds."""
    done = run_process(_polite(tmp_path, "polite", "exit"), stdin=b"", env=_env(), timeout=30,
                       limit=4096)  # fmt: skip
    assert done.exit_code == 0
    assert (tmp_path / "termed").read_text() == (tmp_path / "helper").read_text()
    assert _gone(int((tmp_path / "helper").read_text()))


@CONTAINED
def test_a_helper_deaf_to_sigterm_is_still_killed(tmp_path: Path) -> None:
    seen: list[Spawned] = []
    done = run_process(_polite(tmp_path, "deaf", "exit"), stdin=b"", env=_env(), timeout=30,
                       limit=4096, on_spawn=seen.append)  # fmt: skip
    assert done.exit_code == 0
    assert not (tmp_path / "termed").exists()
    assert _gone(int((tmp_path / "helper").read_text()))
    assert seen[0].cgroup is not None and not _box_path(seen[0].cgroup).exists()


#: A tool that leaves ``git add`` running in ``repo`` (its clean filter sleeps, so git holds
#: ``.git/index.lock`` meanwhile), in a session of its own, and exits once the lock is there.
GIT_LEFT = r"""
import os, subprocess, sys, time
repo = sys.argv[1]
subprocess.Popen(["git", "-c", "filter.slow.clean=sleep 30; cat", "add", "slow.txt"], cwd=repo,
                 start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
lock = os.path.join(repo, ".git", "index.lock")
for _ in range(3000):
    if os.path.exists(lock):
        break
    time.sleep(0.01)
print("locked" if os.path.exists(lock) else "no lock")
"""


@CONTAINED
def test_a_git_left_running_releases_the_index_lock(tmp_path: Path) -> None:
    """A tool that leaves the agent's ``git`` running in the shared repository, holding
    ``.git/index.lock``: the call's end stops it, and it must not leave the lock behind (that
    would fail every later commit there, the controller's outcome commit included)."""
    repo = tmp_path / "repo"
    ident = {
        "GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
        "GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.com",
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": str(tmp_path),
    }  # fmt: skip
    env = {**_env(), **ident}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / ".git" / "info" / "attributes").write_text("slow.txt filter=slow\n")
    (repo / "note.txt").write_text("a staged note\n")
    (repo / "slow.txt").write_text("filtered slowly\n")
    subprocess.run(["git", "add", "note.txt"], cwd=repo, check=True, env=env)
    tool = tmp_path / "git_left.py"
    tool.write_text(GIT_LEFT)
    done = run_process([sys.executable, str(tool), str(repo)], stdin=b"", env=env, timeout=60,
                       limit=4096)  # fmt: skip
    assert done.stdout == b"locked\n", done
    assert not (repo / ".git" / "index.lock").exists()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, env=env,
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert status.stdout == "A  note.txt\n?? slow.txt\n"  # the staged entry is still there
    subprocess.run(["git", "commit", "-q", "-m", "later"], cwd=repo, check=True, env=env)


#: A tool that leaves a helper in a new session which, on SIGTERM, takes ``slow`` seconds to
#: release what it holds (writes ``termed``) before it exits; the tool itself hangs and dies
#: at once on SIGTERM.
SLOW_TERM = r"""
import os, signal, sys, time
out, slow = sys.argv[1], float(sys.argv[2])
if os.fork() == 0:
    os.setsid()
    for n in (0, 1, 2):
        os.dup2(os.open(os.devnull, os.O_RDWR), n)
    def termed(*_):
        time.sleep(slow)
        open(os.path.join(out, "termed"), "w").write(str(os.getpid()))
        os._exit(0)
    signal.signal(signal.SIGTERM, termed)
    open(os.path.join(out, "helper"), "w").write(str(os.getpid()))
    time.sleep(60)
    os._exit(0)
for _ in range(6000):
    if os.path.exists(os.path.join(out, "helper")):
        break
    time.sleep(0.01)
time.sleep(60)
"""


@CONTAINED
def test_a_timeout_gives_the_helpers_the_grace_not_only_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a timeout the tool (the group's leader) dies at once on SIGTERM; a helper it left
    in the call's cgroup still gets the whole grace to end on its own, not just the moment
    until the leader has exited. The grace is made long here so no load can cut it short;
    the helper takes 2 s."""
    from controller.execution.tools import process

    monkeypatch.setattr(process, "KILL_GRACE", 60.0)
    path = tmp_path / "slow.py"
    path.write_text(SLOW_TERM)
    seen: list[Spawned] = []
    with pytest.raises(Overran):
        run_process([sys.executable, str(path), str(tmp_path), "2"], stdin=b"", env=_env(),
                    timeout=8, limit=4096, on_spawn=seen.append)  # fmt: skip
    assert (tmp_path / "helper").exists(), "the helper never started (8 s)"
    assert (tmp_path / "termed").read_text() == (tmp_path / "helper").read_text()
    assert seen[0].cgroup is not None and not _box_path(seen[0].cgroup).exists()
