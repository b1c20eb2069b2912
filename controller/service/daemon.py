"""``plangate run``: the long-running controller (SPEC §8).

The daemon is a level-triggered loop around :meth:`Controller.reconcile`. Every event only
*schedules* a pass; the pass itself looks at the whole current state, so a lost, repeated or
reordered event can never cause a wrong action, only an extra cheap pass:

- local mode: :class:`~controller.service.watcher.RepoWatcher` reports plan files and ref changes
  (``git commit``/``merge``/``pull`` by anyone) through inotify, no polling;
- remote mode: a timer every ``remote.poll_interval`` and the webhook (an immediate fetch);
- always: start-up, a finished plan, a reload, and a full resync every
  ``execution.resync_interval`` as the safety net.

Events arriving during a pass are coalesced into the next one. Plans run in a pool of
``execution.max_concurrent_plans`` worker threads (``Controller.execute``): a plan the pass
starts is handed over mid-pass, the moment its start commit is on the branch (the pass then
finishes while its first action starts); plans a pass finds already started (a restart) are
returned by it. The controller serializes git writes, so a long plan never blocks freezing
or approving others.

Signals: SIGTERM/SIGINT stop starting actions, let each running action finish (bounded by
its timeout), checkpoint and commit through the controller, and exit 0; a second one exits
at once with 128+signal (the journal makes the next start safe). SIGHUP re-reads the config
file: approval rules, tools, limits, endpoints and concurrency apply to the next pass and
the next plan started (a running plan keeps the tools it started with); a change to
``repo``, ``remote``, ``state_dir``, ``plans_dir`` or ``identity`` needs a restart and is
refused with a log line, as is an invalid file (the old config stays in force).

Signal handlers only set flags and write to a self-pipe; the loop does the work, so no
handler ever waits for a lock the interrupted code might hold.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from controller import logs
from controller.errors import ConfigInvalid, PlangateError
from controller.service import metrics
from controller.service.sdnotify import Notifier
from controller.settings import Config, load_config

if TYPE_CHECKING:
    from controller.service.httpd import HttpServer
    from controller.service.reconcile import Controller, Job
    from controller.service.ui.data import UiData
    from controller.service.watcher import RepoWatcher

log = logs.get_logger("plangate.daemon")

#: Keys whose change needs a restart: they decide which repo, state and identity we are.
RESTART_KEYS = ("repo", "remote", "state_dir", "plans_dir", "identity")
#: Retry delays after a failed pass (seconds), capped by the poll interval in remote mode.
#: Most failures are a human's git command holding a lock for a moment: retry fast first.
BACKOFF = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
#: How long a plan-file change waits for a commit to share a pass with (seconds).
FILE_DELAY = 0.3
#: A pass running longer than this stops the systemd watchdog pings (the loop is stuck).
STALL_AFTER = 900.0


@dataclass
class Timers:
    """Monotonic deadlines of the loop's periodic work (None = never)."""

    resync: float
    poll: float | None = None
    retry: float | None = None

    def due(self, now: float) -> list[str]:
        deadlines = {"resync": self.resync, "poll": self.poll, "retry": self.retry}
        return [name for name, at in deadlines.items() if at is not None and at <= now]

    def next(self) -> float:
        return min(t for t in (self.resync, self.poll, self.retry, 1e18) if t is not None)


@dataclass
class Wakeups:
    """Reasons for the next pass, filled from any thread; the self-pipe wakes the loop.

    A reason added with a delay (a plan file written) waits up to that delay for company: a
    human who edits a PLAN.yml usually commits it a moment later, and one pass for both is
    cheaper and sooner than a pass for the edit that holds up the pass for the commit.
    """

    read_fd: int = -1
    write_fd: int = -1
    reasons: set[str] = field(default_factory=set)
    later: set[str] = field(default_factory=set)
    later_deadline: float | None = None
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    def add(self, reason: str, delay: float = 0.0) -> None:
        with self.lock:
            if delay <= 0:
                self.reasons.add(reason)
            else:
                self.later.add(reason)
                if self.later_deadline is None:
                    self.later_deadline = time.monotonic() + delay
        self.poke()

    def poke(self) -> None:
        if self.closed:
            return
        # A full pipe means the loop is awake anyway.
        with contextlib.suppress(BlockingIOError):
            os.write(self.write_fd, b".")

    def wait(self, until: float) -> None:
        """Sleep until ``until`` (monotonic), a delayed reason falls due, or a poke."""
        with self.lock:
            if self.later_deadline is not None:
                until = min(until, self.later_deadline)
        select.select([self.read_fd], [], [], max(until - time.monotonic(), 0))
        try:
            while os.read(self.read_fd, 4096):
                pass
        except BlockingIOError:
            pass

    def take(self, now: float) -> set[str]:
        """Reasons due now; delayed ones ride along with any pass (it covers them too)."""
        with self.lock:
            due = self.later_deadline is not None and self.later_deadline <= now
            if not self.reasons and not due:
                return set()
            taken = self.reasons | self.later
            self.reasons, self.later, self.later_deadline = set(), set(), None
        return taken

    def close(self) -> None:
        self.closed = True
        os.close(self.read_fd)
        os.close(self.write_fd)


class Daemon:
    """One controller process: endpoints, watcher, loop, worker pool, signals."""

    def __init__(
        self,
        config: Config,
        *,
        notifier: Notifier | None = None,
        controller_factory: Callable[[Config], Controller] | None = None,
    ) -> None:
        self.config = config
        self.notifier = notifier or Notifier()
        self._factory = controller_factory or _default_controller
        self.controller: Controller | None = None
        self.wakeups = Wakeups()
        self._signals: list[int] = []
        self._stopping = threading.Event()
        self._stop_requested = False
        self._pool: ThreadPoolExecutor | None = None
        self._inflight: dict[str, Future[None]] = {}
        self._inflight_lock = threading.Lock()
        self._watcher: RepoWatcher | None = None
        self._servers: dict[str, HttpServer] = {}
        self._ui: UiData | None = None
        self._failures = 0
        self._pass_started: float | None = None
        self._pinger: threading.Thread | None = None
        self._repo_root = config.repo_path().resolve()
        self.passes = 0

    # --- lifecycle ------------------------------------------------------------------------

    def run(self) -> int:
        """Serve until SIGTERM/SIGINT; 0 on a clean stop."""
        self._install_signals()
        try:
            self._start()
            self._loop()
        finally:
            self._shutdown()
        return 0

    def _start(self) -> None:
        self.controller = self._factory(self.config)
        self._start_endpoints()
        metrics.set_plans_source(self._plans_by_status)
        self._pool = self._new_pool()
        if not self.config.is_remote:
            from controller.service.watcher import RepoWatcher

            self._watcher = RepoWatcher(
                self.config.repo_path(), self.config.plans_dir, self._on_file_or_ref
            ).start()
        self._start_pinger()
        log.info("daemon.started", mode=self._mode(), pid=os.getpid())
        self._pass({"start-up"})
        self.notifier.ready(self._status_line())

    def _new_pool(self) -> ThreadPoolExecutor:
        workers = self.config.execution.max_concurrent_plans
        return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="plan")

    def _mode(self) -> str:
        if self.config.remote is not None:
            return f"remote {self.config.remote.url} {self.config.remote.branch}"
        return f"local {self.config.repo_path()}"

    def _shutdown(self) -> None:
        self._stopping.set()
        running = len(self._inflight)
        self.notifier.stopping(f"stopping: waiting for {running} running plan(s)")
        if running:
            log.info("daemon.stopping", running=sorted(self._inflight))
        if self._watcher is not None:
            self._watcher.stop()
        for server in self._servers.values():
            server.stop()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        if self._ui is not None:
            self._ui.close()
        if self.controller is not None:
            self.controller.close()
        metrics.set_plans_source(None)
        log.info("daemon.stopped")
        # The self-pipe stays open: a late signal or worker may still poke it, and a closed
        # descriptor number could by then belong to another file.

    # --- signals --------------------------------------------------------------------------

    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # embedded (tests): the caller stops us through request_stop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        stops = [s for s in self._signals if s != signal.SIGHUP]
        if signum != signal.SIGHUP and stops:
            os.write(2, b"plangate: second signal, exiting now (the journal recovers)\n")
            os._exit(128 + signum)
        self._signals.append(signum)
        if signum != signal.SIGHUP:
            # A plain assignment: Event.set() could wait for a lock this thread holds.
            self._stop_requested = True
        self.wakeups.poke()

    def request_stop(self) -> None:
        """Stop as SIGTERM would (for embedding and tests)."""
        self._signals.append(signal.SIGTERM)
        self._stop_requested = True
        self.wakeups.poke()

    def stop_requested(self) -> bool:
        """What running plans poll between actions."""
        return self._stop_requested or self._stopping.is_set()

    # --- the loop ---------------------------------------------------------------------------

    def _loop(self) -> None:
        timers = self._timers()
        while not self.stop_requested():
            self.wakeups.wait(timers.next())
            if self.stop_requested():
                break
            if signal.SIGHUP in self._signals:
                self._signals.remove(signal.SIGHUP)
                self.reload()
            now = time.monotonic()
            reasons = self.wakeups.take(now) | set(timers.due(now))
            if not reasons:
                continue
            self._pass(reasons)
            # Every pass is a full level-triggered pass (and fetches, in remote mode).
            timers = self._timers()

    def _timers(self) -> Timers:
        now = time.monotonic()
        remote = self.config.remote
        return Timers(
            resync=now + self.config.execution.resync_interval,
            poll=None if remote is None else now + remote.poll_interval,
            retry=None if not self._failures else now + self._backoff(),
        )

    def _backoff(self) -> float:
        delay = BACKOFF[min(self._failures, len(BACKOFF)) - 1]
        if self.config.remote is not None:
            delay = min(delay, self.config.remote.poll_interval)
        return delay

    def _pass(self, reasons: set[str]) -> None:
        """One reconcile pass; start the jobs it returns."""
        assert self.controller is not None
        self._pass_started = started = time.monotonic()
        dispatched: list[Job] = []

        def dispatch(job: Job) -> None:  # a plan that just started: run it now, mid-pass
            dispatched.append(job)
            self._submit(job)

        try:
            jobs = self.controller.reconcile(dispatch=dispatch)
        except PlangateError as exc:
            self._pass_failed(exc.code, str(exc), reasons)
            return
        except Exception as exc:  # a bug must not take the service down: log, retry later
            log.exception("reconcile.crashed", reasons=sorted(reasons))
            self._pass_failed("E_INTERNAL", f"{type(exc).__name__}: {exc}", reasons)
            return
        finally:
            self._pass_started = None
        seconds = time.monotonic() - started
        self.passes += 1
        self._failures = 0
        metrics.observe_reconcile(seconds)
        log.debug(
            "reconcile.done",
            reasons=sorted(reasons),
            jobs=len(jobs) + len(dispatched),
            ms=round(seconds * 1e3, 1),
        )
        for job in jobs:
            self._submit(job)
        self._publish_ui()
        self.notifier.status(self._status_line())

    def _pass_failed(self, code: str, message: str, reasons: set[str]) -> None:
        self._failures += 1
        metrics.reconcile_failed(code, message)
        log.warning("reconcile.failed", code=code, error=message, reasons=sorted(reasons))
        self.notifier.status(f"degraded: {code}: {message[:200]}")

    # --- running plans ------------------------------------------------------------------------

    def _submit(self, job: Job) -> None:
        if self.stop_requested() or self._pool is None:
            return
        with self._inflight_lock:
            if job.plan_id in self._inflight:
                return  # queued or running already; the pass saw it again
            self._inflight[job.plan_id] = self._pool.submit(self._execute, job)
            metrics.set_running(len(self._inflight))

    def _execute(self, job: Job) -> None:
        assert self.controller is not None
        with logs.plan_context(job.plan_id, job.plan_hash):
            try:
                if self.stop_requested():
                    return
                log.info("plan.starting", approved_by=job.approval.get("by"), resume=job.resume)
                metrics.plan_started(_approval_latency(job.approval))
                self.controller.execute(job, self.stop_requested)
            except PlangateError as exc:
                log.error("plan.execute_failed", code=exc.code, error=str(exc))
            except Exception:
                log.exception("plan.execute_crashed")
            finally:
                with self._inflight_lock:
                    self._inflight.pop(job.plan_id, None)
                    metrics.set_running(len(self._inflight))
                self.wakeups.add(f"finished:{job.plan_id}")

    def _on_file_or_ref(self, reason: str) -> None:
        """Watcher reports; a running plan's own checkpoint writes need no pass."""
        if not reason.startswith("file:"):
            self.wakeups.add(reason)
        elif self._plan_of(reason[5:]) not in self.running():
            self.wakeups.add(reason, delay=FILE_DELAY)

    def _plan_of(self, path: str) -> str | None:
        try:
            return Path(path).parent.relative_to(self._repo_root).as_posix()
        except ValueError:
            return None

    def running(self) -> set[str]:
        with self._inflight_lock:
            return set(self._inflight)

    # --- reload -----------------------------------------------------------------------------

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
        new = load_config(self.config.source)
        changed = [key for key in RESTART_KEYS if getattr(new, key) != getattr(self.config, key)]
        if changed:
            raise ConfigInvalid(
                f"changing {', '.join(changed)} needs a restart",
                remedy="restart plangate (systemctl restart plangate) to apply these keys",
            )
        return new

    # --- endpoints, watchdog, status ----------------------------------------------------------

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

    def _start_ui(self) -> None:
        from controller.service.ui.data import UiData
        from controller.service.ui.server import serve

        assert self.controller is not None
        controller = self.controller
        self._ui = UiData(self.config, lambda: controller.repo.path, self.config.ui.max_rows)
        self._servers["ui"] = serve(self.config, self._ui, lambda: controller.repo.path)
        self._publish_ui()

    def _publish_ui(self) -> None:
        # The page reads this snapshot; a request never waits for (or blocks) a pass.
        if self._ui is None or self.controller is None:
            return
        try:
            self._ui.publish(self.controller.status(), self.controller.head())
        except PlangateError as exc:
            log.warning("ui.publish_failed", code=exc.code, error=str(exc))

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

    def _plans_by_status(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        if self.controller is not None:
            for plan in self.controller.status():
                status = str(plan.get("status") or "unknown")
                counts[status] = counts.get(status, 0) + 1
        return counts

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

    def _status_line(self) -> str:
        running = self.running()
        what = f"running {len(running)} plan(s)" if running else "idle"
        return f"{what}; {self.passes} passes; {self._mode()}"


def _default_controller(config: Config) -> Controller:
    from controller.service.reconcile import Controller

    return Controller(config)


def _approval_latency(approval: dict[str, Any]) -> float | None:
    """Seconds from the approval's time (the approving commit) to now, when recorded."""
    at = approval.get("at")
    if not isinstance(at, str):
        return None
    try:
        when = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return time.time() - when.timestamp()


def serve(config: Config) -> int:
    """Run the daemon in the foreground until stopped; the exit code of ``plangate run``."""
    logs.configure()
    _redact_secrets(config)
    return Daemon(config).run()


def _redact_secrets(config: Config) -> None:
    try:
        from controller.execution.secrets import redactor_for

        redactor = redactor_for(config)
    except PlangateError as exc:
        log.warning("secrets.unreadable", code=exc.code, error=str(exc))
        return
    if redactor:
        logs.add_redactor(redactor.text)
