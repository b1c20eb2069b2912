"""Helpers for end-to-end daemon tests: the real ``plangate run`` process, its JSON log lines,
polling git until the controller's commits appear, and a ``git daemon`` on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.daemonproc import DaemonProcess, wait_until
from tests.support.gitenv import event_subjects, git

__all__ = ["DaemonProcess", "wait_until"]

Event = dict[str, Any]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_daemon(config: Path, **kwargs: Any) -> Iterator[DaemonProcess]:
    daemon = DaemonProcess(config, **kwargs)
    try:
        yield daemon
    finally:
        daemon.kill()


def subjects(repo: Path, ref: str = "HEAD") -> list[str]:
    """Subjects newest first, without the controller's ``record policy`` commits (made on
    its first pass and on a config change; tests/approval/test_recorded_policy.py)."""
    return [s for s in event_subjects(repo, ref) if s != POLICY_SUBJECT]


POLICY_SUBJECT = "plangate: record policy"


def wait_for_commit(repo: Path, subject: str, timeout: float = 30, ref: str = "HEAD") -> None:
    """Wait for the controller's commit, and (in a working tree) for the tree to match it:
    the branch moves a moment before the controller writes the files it committed."""
    wait_until(lambda: subject in subjects(repo, ref), timeout, f"commit {subject!r}")
    if ref == "HEAD" and (repo / ".git").exists():
        try:
            wait_until(lambda: git(repo, "status", "--porcelain") == "", timeout, "a clean tree")
        except AssertionError as exc:
            dirty = git(repo, "status", "--porcelain")
            raise AssertionError(f"{exc} after {subject!r}: {dirty}") from None


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
