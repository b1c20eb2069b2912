"""Keeping a running daemon in shape: config reload (SIGHUP), endpoints, the systemd watchdog.

SIGHUP re-reads the config file: approval rules, tools, limits, endpoints and concurrency
apply to the next pass and the next plan started (a running plan keeps the tools it started
with); a change to one of :data:`RESTART_KEYS` needs a restart and is refused with a log line,
as is an invalid file (the old config stays in force). The watchdog is pinged only while the
loop makes progress.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from controller import logs
from controller.errors import ConfigInvalid, PlangateError
from controller.service import metrics
from controller.service.sdnotify import Notifier
from controller.service.wakeups import Wakeups
from controller.settings import Config, load_config

if TYPE_CHECKING:
    from controller.service.httpd import HttpServer
    from controller.service.reconcile import Controller
    from controller.service.ui.data import UiData


log = logs.get_logger("plangate.daemon")

#: Keys whose change needs a restart: they decide which repo, state and identity we are.
RESTART_KEYS = ("repo", "remote", "state_dir", "plans_dir", "identity")
#: A pass running longer than this stops the systemd watchdog pings (the loop is stuck).
STALL_AFTER = 900.0


class Upkeep:
    """The daemon's reload, endpoint and watchdog duties (part of the Daemon)."""

    config: Config
    notifier: Notifier
    controller: Controller | None
    wakeups: Wakeups
    _pool: ThreadPoolExecutor | None
    _servers: dict[str, HttpServer]
    _ui: UiData | None
    _stopping: threading.Event
    _pass_started: float | None
    _pinger: threading.Thread | None
    passes: int

    if TYPE_CHECKING:

        def _status_line(self) -> str: ...  # the Daemon's

    def reload(self) -> bool:
        """Re-read the config file (SIGHUP); True when the new one is in force."""
        self.notifier.reloading()
        try:
            new = self._read_new_config()
        except PlangateError as exc:
            log.error("config.reload_refused", code=exc.code, error=str(exc), remedy=exc.remedy)
            self.notifier.ready(f"reload refused: {exc.code}")
            return False
        old, self.config = self.config, new
        if self.controller is not None:
            self.controller.config = new  # read afresh by the next pass and the next Engine
        if old.execution.max_concurrent_plans != new.execution.max_concurrent_plans:
            previous, self._pool = self._pool, self._new_pool()
            if previous is not None:
                previous.shutdown(wait=False)
        if (old.webhook, old.metrics) != (new.webhook, new.metrics):
            self._restart_endpoints()
        log.info("config.reloaded", source=str(new.source))
        self.wakeups.add("reload")
        self.notifier.ready(self._status_line())
        return True

    def _read_new_config(self) -> Config:
        if self.config.source is None:
            raise ConfigInvalid("the config was not read from a file; nothing to reload")
        from controller.execution.secrets import redactor_for
        from controller.plan.catalog import refuse_secrets_in_catalog

        new = load_config(self.config.source)
        refuse_secrets_in_catalog(new, redactor_for(new))  # as every load (round 71)
        changed = [key for key in RESTART_KEYS if getattr(new, key) != getattr(self.config, key)]
        if changed:
            raise ConfigInvalid(
                f"changing {', '.join(changed)} needs a restart",
                remedy="restart plangate (systemctl restart plangate) to apply these keys",
            )
        return new

    def _start_endpoints(self) -> None:
        if self.config.metrics.listen:
            metrics.enable()
            metrics.set_plans_source(self._plans_by_status)
            logs.add_observer(metrics.observe_event)
            self._servers["metrics"] = metrics.serve(self.config.metrics.listen)
        if self.config.webhook.listen:
            from controller.service import webhook

            self._servers["webhook"] = webhook.serve(self.config, self.wakeups.add)
        if self.config.ui.listen:
            self._start_ui()

    def _restart_endpoints(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers.clear()
        if not self.config.metrics.listen:
            metrics.disable()
        try:
            self._start_endpoints()
        except PlangateError as exc:
            log.error("endpoints.restart_failed", code=exc.code, error=str(exc))

    def _start_ui(self) -> None:
        from controller.service.statedir import is_own_commit
        from controller.service.ui.data import UiData
        from controller.service.ui.server import serve

        assert self.controller is not None
        controller = self.controller
        self._ui = UiData(
            self.config,
            lambda: controller.repo.path,
            self.config.ui.max_rows,
            store=lambda: controller.repo.store,
            is_own=is_own_commit(self.config, controller.own_commits),
        )
        self._servers["ui"] = serve(self.config, self._ui, lambda: controller.repo.path)
        # a snapshot only after a pass: before the first one ends the controller is still
        # reading history, its rows are not the branch's, and the page answers "not ready"
        # (round 95, page-startup-absent: plans held all along read as absent); a reload's
        # new page publishes at once
        if self.passes:
            self._publish_ui()

    def _publish_ui(self) -> None:
        # The page reads this snapshot; a request never waits for (or blocks) a pass.
        if self._ui is None or self.controller is None:
            return
        try:
            self._ui.publish(self.controller.status(), self.controller.head())
        except PlangateError as exc:
            log.warning("ui.publish_failed", code=exc.code, error=str(exc))

    def _plans_by_status(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        if self.controller is not None:
            for plan in self.controller.status():
                status = str(plan.get("status") or "unknown")
                counts[status] = counts.get(status, 0) + 1
        return counts

    def _new_pool(self) -> ThreadPoolExecutor:
        workers = self.config.execution.max_concurrent_plans
        return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="plan")

    def _start_pinger(self) -> None:
        interval = self.notifier.watchdog_interval()
        if interval is None:
            return
        self._pinger = threading.Thread(
            target=self._ping_loop, args=(interval,), name="sd-watchdog", daemon=True
        )
        self._pinger.start()

    def _ping_loop(self, interval: float) -> None:
        # Pings only while the loop makes progress: a pass stuck for STALL_AFTER seconds
        # lets systemd's watchdog restart the service.
        while not self._stopping.wait(interval):
            started = self._pass_started
            if started is None or time.monotonic() - started < STALL_AFTER:
                self.notifier.watchdog()
