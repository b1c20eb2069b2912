"""Helpers for end-to-end daemon tests: the real ``plangate run`` process, its JSON log lines,
polling git until the controller's commits appear, and a ``git daemon`` on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import ROOT, git

Event = dict[str, Any]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], Any], timeout: float = 30, what: str = "condition") -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class DaemonProcess:
    """``python -m controller run --config CONFIG`` with JSON logs captured to a file."""

    def __init__(self, config: Path, *, env: dict[str, str] | None = None) -> None:
        self.config = config
        self.log_path = config.parent / f"daemon-{time.monotonic_ns()}.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--config", str(config)],
            cwd=config.parent,
            env={
                **os.environ,
                "PYTHONPATH": str(ROOT),
                "PLANGATE_LOG_FORMAT": "json",
                "PLANGATE_LOG_LEVEL": "debug",
                **(env or {}),
            },
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def events(self) -> list[Event]:
        found = []
        for line in self.text().splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
        return found

    def wait_event(self, name: str, timeout: float = 30, **fields: Any) -> Event:
        def match() -> Event | None:
            self._check_alive()
            for event in self.events():
                if event.get("event") == name and all(event.get(k) == v for k, v in fields.items()):
                    return event
            return None

        return wait_until(match, timeout, f"log event {name} {fields}") or {}

    def _check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited {self.proc.returncode}:\n{self.text()[-3000:]}")

    def send(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        try:
            code = self.proc.wait(timeout)
        finally:
            self._log.close()
        return code

    def wait(self, timeout: float = 60) -> int:
        """Wait for an exit already asked for (a second signal would force it)."""
        try:
            return self.proc.wait(timeout)
        finally:
            self._log.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self._log.close()


@contextmanager
def running_daemon(config: Path, **kwargs: Any) -> Iterator[DaemonProcess]:
    daemon = DaemonProcess(config, **kwargs)
    try:
        yield daemon
    finally:
        daemon.kill()


def subjects(repo: Path, ref: str = "HEAD") -> list[str]:
    return git(repo, "log", "--format=%s", ref).splitlines()


def wait_for_commit(repo: Path, subject: str, timeout: float = 30, ref: str = "HEAD") -> None:
    """Wait for the controller's commit, and (in a working tree) for the tree to match it:
    the branch moves a moment before the controller writes the files it committed."""
    wait_until(lambda: subject in subjects(repo, ref), timeout, f"commit {subject!r}")
    if ref == "HEAD" and (repo / ".git").exists():
        wait_until(lambda: git(repo, "status", "--porcelain") == "", timeout, "a clean tree")


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """Serve every repo under ``base`` read-write on git://127.0.0.1:PORT/; yields the URL base."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            f"--base-path={base}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"git://127.0.0.1:{port}"
    try:
        wait_until(lambda: _accepts(port), 15, "git daemon")
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False
