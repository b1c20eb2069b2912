"""systemd's notify protocol (``Type=notify``) without a dependency.

The service manager passes a unix datagram socket in ``$NOTIFY_SOCKET`` (a path, or an
abstract name starting with ``@``); each message is newline-separated ``KEY=value`` lines.
plangate sends ``READY=1`` after its first reconcile pass, ``STATUS=...`` lines an operator
sees in ``systemctl status``, ``RELOADING=1`` around a SIGHUP reload, ``STOPPING=1`` on
shutdown, and ``WATCHDOG=1`` at half of ``$WATCHDOG_USEC`` from the main loop, so a hung
loop (not just a dead process) gets restarted. Outside systemd every call does nothing.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping

from controller.logs import get_logger

log = get_logger("plangate.sdnotify")


class Notifier:
    """Talks to ``$NOTIFY_SOCKET``; silent when there is none."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.address = _socket_address(env.get("NOTIFY_SOCKET", ""))
        self.watchdog_usec = _watchdog_usec(env)
        self._sock: socket.socket | None = None

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def watchdog_interval(self) -> float | None:
        """Seconds between ``WATCHDOG=1`` pings (half the timeout), or None when unset."""
        return None if not self.watchdog_usec else self.watchdog_usec / 2_000_000

    def notify(self, **fields: str | int) -> bool:
        """Send ``KEY=value`` lines (keys upper-cased); True when a message went out."""
        if self.address is None:
            return False
        text = "\n".join(f"{key.upper()}={value}" for key, value in fields.items())
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto(text.encode("utf-8", "replace"), self.address)
        except OSError as exc:  # systemd gone or socket full: log once in a while, go on
            log.warning("sdnotify.failed", error=str(exc))
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.notify(ready=1, **({"status": status} if status else {}))

    def status(self, text: str) -> bool:
        return self.notify(status=text)

    def reloading(self) -> bool:
        # MONOTONIC_USEC lets Type=notify-reload (systemd >= 253) match the reload request.
        return self.notify(
            reloading=1, monotonic_usec=time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        )

    def stopping(self, status: str = "") -> bool:
        return self.notify(stopping=1, **({"status": status} if status else {}))

    def watchdog(self) -> bool:
        return self.notify(watchdog=1)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _socket_address(value: str) -> str | None:
    if not value:
        return None
    if value.startswith("@"):  # abstract namespace
        return "\0" + value[1:]
    return value if value.startswith("/") else None


def _watchdog_usec(env: Mapping[str, str]) -> int | None:
    pid = env.get("WATCHDOG_PID")
    if pid and pid != str(os.getpid()):  # meant for another process (e.g. our parent)
        return None
    try:
        usec = int(env.get("WATCHDOG_USEC", "0"))
    except ValueError:
        return None
    return usec if usec > 0 else None
