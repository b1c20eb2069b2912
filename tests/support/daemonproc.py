"""The real ``plangate run`` process, its JSON log lines, and what it costs the machine.

Tests wait for log events by name (:meth:`DaemonProcess.wait_event`); benchmarks read the log
as it grows (:meth:`DaemonProcess.new_events`, :meth:`DaemonProcess.wait_for`) and measure the
process (:meth:`DaemonProcess.cpu_seconds`, :meth:`DaemonProcess.rss_mb`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.gitenv import ROOT

Event = dict[str, Any]


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

    def __init__(
        self, config: Path, *, env: dict[str, str] | None = None, level: str = "debug"
    ) -> None:
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
                "PLANGATE_LOG_LEVEL": level,
                **(env or {}),
            },
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        self._reader: Any = None
        self._pending = b""
        #: Every event :meth:`new_events` has returned, in order.
        self.seen: list[Event] = []

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def events(self) -> list[Event]:
        return _parse(self.text().splitlines())

    def wait_event(self, name: str, timeout: float = 30, **fields: Any) -> Event:
        def match() -> Event | None:
            self._check_alive()
            for event in self.events():
                if event.get("event") == name and all(event.get(k) == v for k, v in fields.items()):
                    return event
            return None

        return wait_until(match, timeout, f"log event {name} {fields}") or {}

    def wait_started(self, timeout: float = 30) -> Event:
        """Started, and its first pass has the recorded policy in place (a commit on a new
        repo: a test's own commit made meanwhile would race it)."""
        self.wait_event("daemon.started", timeout)
        return self.wait_event("policy_in_force", timeout)

    def new_events(self) -> list[Event]:
        """The events logged since the last call (the log is read once, as it grows)."""
        if self._reader is None:
            self._reader = self.log_path.open("rb")
        lines = (self._pending + self._reader.read()).split(b"\n")
        self._pending = lines.pop()
        events = _parse(lines)
        self.seen += events
        return events

    def wait_for(self, accept: Callable[[Event], Any], timeout: float) -> Event:
        """The first new event ``accept`` takes, polled every millisecond (benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.new_events():
                if accept(event):
                    return event
            self._check_alive()
            time.sleep(0.001)
        raise AssertionError(f"timed out; daemon log tail:\n{self.text()[-2000:]}")

    def _check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited {self.proc.returncode}:\n{self.text()[-3000:]}")

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.proc.pid)

    def rss_mb(self) -> tuple[float, float]:
        """(resident, peak resident) megabytes."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024

    def send(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 60) -> int:
        """Stop it as systemd would, once it has taken its signals (``daemon.started``):
        a signal before that ends the bare interpreter, so the start-up pass never ran and a
        lock a SIGKILLed predecessor left stayed for the next start (round 99's lab under
        load, CI 2026-12-06: its own ``git add`` then failed on ``index.lock``)."""
        if self.proc.poll() is None:
            self._until_started(30)
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        try:
            code = self.proc.wait(timeout)
        finally:
            self._close()
        return code

    def _until_started(self, timeout: float) -> None:
        """Until the log says ``daemon.started`` or the process ended (bounded)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if "daemon.started" in self.text():
                return
            time.sleep(0.02)

    def wait(self, timeout: float = 60) -> int:
        """Wait for an exit already asked for (a second signal would force it)."""
        try:
            return self.proc.wait(timeout)
        finally:
            self._close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self._close()

    def _close(self) -> None:
        self._log.close()
        if self._reader is not None:
            self._reader.close()


def _parse(lines: list[str] | list[bytes]) -> list[Event]:
    found = []
    for line in lines:
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found


def cpu_seconds(pid: int) -> float:
    """CPU time of all of a process's threads (schedstat: nanosecond resolution)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9
