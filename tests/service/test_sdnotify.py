"""systemd's notify protocol against a real unix datagram socket."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.service.sdnotify import Notifier


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[str, socket.socket]]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(5)
    yield path, sock
    sock.close()


def received(sock: socket.socket) -> dict[str, str]:
    data = sock.recv(4096).decode()
    return dict(line.split("=", 1) for line in data.splitlines())


def test_ready_status_watchdog_stopping(notify_socket: tuple[str, socket.socket]) -> None:
    path, sock = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "10000000"})
    assert notifier.enabled
    assert notifier.watchdog_interval() == 5.0
    assert notifier.ready("watching plans/")
    assert received(sock) == {"READY": "1", "STATUS": "watching plans/"}
    notifier.status("running 1 plan")
    assert received(sock) == {"STATUS": "running 1 plan"}
    notifier.watchdog()
    assert received(sock) == {"WATCHDOG": "1"}
    notifier.reloading()
    message = received(sock)
    assert message["RELOADING"] == "1" and int(message["MONOTONIC_USEC"]) > 0
    notifier.stopping("stopping")
    assert received(sock) == {"STOPPING": "1", "STATUS": "stopping"}
    notifier.close()


def test_abstract_socket_name() -> None:
    name = f"plangate-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(5)
    try:
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).ready()
        assert received(sock) == {"READY": "1"}
    finally:
        sock.close()


def test_outside_systemd_nothing_is_sent() -> None:
    notifier = Notifier({})
    assert not notifier.enabled
    assert not notifier.ready()
    assert notifier.watchdog_interval() is None


def test_watchdog_meant_for_another_process_is_ignored(
    notify_socket: tuple[str, socket.socket],
) -> None:
    path, _ = notify_socket
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"}
    assert Notifier(env).watchdog_interval() is None
    env["WATCHDOG_PID"] = str(os.getpid())
    assert Notifier(env).watchdog_interval() == 1.0


def test_vanished_socket_is_not_fatal(tmp_path: Path) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")})
    assert notifier.enabled
    assert not notifier.ready()
