"""``python -m controller`` calls forked from one pre-imported process: the same CLI, the
same separate process per call, without paying the interpreter's start-up and the imports
(about 200 ms) on each of the thousands of calls the attack labs make.

A test worker starts one server (``python clifork.py SOCKET``) on its first call. The
server imports every module of the ``controller`` package, then waits. Each call sends the argv,
working folder, full environment and timeout, with the call's stdin, stdout and stderr as
file descriptors; the server forks a handler, the handler forks the call's process, which
takes those descriptors as 0, 1 and 2, the folder, the environment, and runs
``controller.cli.entry()`` as ``python -m controller`` does (exit handlers included). The
handler waits up to the timeout (then kills the call's process group) and answers with the
exit code.

What the fork does not redo: the interpreter's flags, ``PYTHON*`` variables read at start-up
and the locale are the server's, taken from the test worker's own environment.

``PLANGATE_TEST_SPAWN=1`` runs every call as a fresh interpreter instead (the whole start-up,
for a run that wants it). ``TEST_CLI_PROFILE=<folder>`` writes a cProfile file per call there
(``pstats.Stats(*glob("<folder>/*.prof"))``: where the suite's CLI time goes).

Tests about start-up itself (which modules a command imports, how long it takes) spawn
their own interpreter (``tests/test_cli_startup.py``).
"""

from __future__ import annotations

import array
import contextlib
import json
import locale
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

_HEADER = struct.Struct("!I")
_server: tuple[subprocess.Popen[bytes], str] | None = None
_lock = threading.Lock()


# -- the client (in the test worker) ------------------------------------------------------
def run(
    args: list[str],
    *,
    cwd: Path | str,
    env: dict[str, str],
    timeout: float,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([python, -m, controller, *args], capture_output, text)`` in a forked
    process; raises ``subprocess.TimeoutExpired`` as ``subprocess.run`` does."""
    argv = [sys.executable, "-m", "controller", *args]
    path = _server_socket()
    if path is None:
        return subprocess.run(
            argv, cwd=cwd, env=env, input=input, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip
    with (
        tempfile.TemporaryFile() as stdin,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn,
    ):
        if input:
            stdin.write(input.encode("utf-8"))
            stdin.seek(0)
        conn.connect(path)
        request = json.dumps({"args": args, "cwd": str(cwd), "env": env, "timeout": timeout})
        body = request.encode("utf-8")
        fds = array.array("i", [stdin.fileno(), out.fileno(), err.fileno()])
        conn.sendmsg(
            [_HEADER.pack(len(body)) + body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)]
        )
        conn.settimeout(timeout + 30)
        reply = json.loads(_read_message(conn))
        out.seek(0)
        err.seek(0)
        stdout, stderr = _text(out.read()), _text(err.read())
    if reply.get("timeout"):
        raise subprocess.TimeoutExpired(argv, timeout, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(argv, int(reply["rc"]), stdout, stderr)


def _text(data: bytes) -> str:
    """Output as ``subprocess.run(text=True)`` reads it: the locale's encoding, strict, with
    universal newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _server_socket() -> str | None:
    """The socket of this process's server, started on first use (None: spawn each call)."""
    global _server
    if os.environ.get("PLANGATE_TEST_SPAWN") == "1":
        return None
    with _lock:
        if _server is not None and _server[0].poll() is None:
            return _server[1]
        folder = tempfile.mkdtemp(prefix="plangate-clifork-")
        path = os.path.join(folder, "s")
        process = subprocess.Popen(
            [sys.executable, __file__, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )  # the server ends when its stdin does: when this process ends, however it ends
        assert process.stdout is not None
        if process.stdout.readline().strip() != b"ready":
            process.kill()
            raise RuntimeError("the CLI fork server did not start")
        _server = (process, path)
        return path


def stop() -> None:
    """Stop this process's server (at the end of the test session)."""
    global _server
    if _server is not None:
        _server[0].kill()
        _server[0].wait()
        _forget(_server[1])
        _server = None


def _forget(path: str) -> None:
    """Remove the server's socket and its folder (hundreds were left in /tmp)."""
    with contextlib.suppress(OSError):
        os.unlink(path)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(path))


def _read_message(conn: socket.socket) -> bytes:
    head = _read_exactly(conn, _HEADER.size)
    return _read_exactly(conn, _HEADER.unpack(head)[0])


def _read_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the CLI fork server closed the connection")
        data += chunk
    return data


# -- the server -----------------------------------------------------------------------------
def _serve(path: str) -> None:
    import gc
    import importlib
    import pkgutil

    import controller

    for module in pkgutil.walk_packages(controller.__path__, "controller."):
        if module.name != "controller.__main__":  # (that one runs the CLI)
            importlib.import_module(module.name)
    _warm()
    gc.collect()
    gc.freeze()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        ready, _, _ = select.select([server, sys.stdin], [], [])
        if sys.stdin in ready:  # the test worker is gone
            server.close()
            _forget(path)
            return
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            try:
                _handle(conn)
            finally:
                os._exit(0)
        conn.close()
        while True:  # reap finished handlers
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break


def _warm() -> None:
    """What every call would compile again on first use: the YAML writer's Unicode patterns
    and ruamel's resolver patterns (about 8 ms a call, the suite's largest share after the
    imports)."""
    from controller.plan import yamlio

    doc = yamlio.read_yaml("plan: {name: x}\nactions: [{id: 1, n: 1.5, t: true}]\n")
    yamlio.set_block(doc, "execution", {"status": "ok", "at": "2026-01-01T00:00:00Z"})
    yamlio.dump({"a": ["x", 1, None, 2.5, "é"]})


def _handle(conn: socket.socket) -> None:
    head, fds = _receive(conn, _HEADER.size)
    (size,) = _HEADER.unpack(head)
    body = _read_exactly(conn, size)
    request: dict[str, Any] = json.loads(body)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _call(request, fds)  # never returns
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([pidfd], [], [], request["timeout"])
    timed_out = not ready
    if timed_out:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    reply = json.dumps({"rc": code, "timeout": timed_out}).encode("utf-8")
    conn.sendall(_HEADER.pack(len(reply)) + reply)


def _receive(conn: socket.socket, size: int) -> tuple[bytes, list[int]]:
    data, ancillary, _, _ = conn.recvmsg(size, socket.CMSG_SPACE(3 * array.array("i").itemsize))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.extend(array.array("i", payload[: len(payload) - len(payload) % 4]))
    return data + _read_exactly(conn, size - len(data)), fds


def _call(request: dict[str, Any], fds: list[int]) -> None:
    """The call's process: descriptors, group, folder, environment, argv; then the CLI."""
    code = 1
    try:
        os.setpgid(0, 0)  # its own group: a timeout kills the tools it started too
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [sys.executable, *request["args"]]
        from controller.cli import entry

        try:
            if os.environ.get("TEST_CLI_PROFILE"):  # a folder: one cProfile file per call
                import cProfile

                profile = cProfile.Profile()
                code = profile.runcall(entry)
                profile.dump_stats(
                    os.path.join(os.environ["TEST_CLI_PROFILE"], f"{os.getpid()}.prof")
                )
            else:
                code = entry()
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code & 0xFF)


if __name__ == "__main__":
    _serve(sys.argv[1])
