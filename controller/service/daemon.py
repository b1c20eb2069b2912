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

Signal handlers only set flags and write to a self-pipe (:mod:`~controller.service.wakeups`);
the loop does the work, so no handler ever waits for a lock the interrupted code might hold.
Reload, endpoints (metrics, webhook, the page) and the watchdog are
:mod:`~controller.service.upkeep`.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from controller import logs
from controller.errors import PlangateError
from controller.service import metrics
from controller.service.sdnotify import Notifier
from controller.service.upkeep import Upkeep
from controller.service.wakeups import Timers, Wakeups
from controller.settings import Config

if TYPE_CHECKING:
    from controller.service.httpd import HttpServer
    from controller.service.reconcile import Controller, Job
    from controller.service.ui.data import UiData
    from controller.service.watcher import RepoWatcher

log = logs.get_logger("plangate.daemon")

#: Retry delays after a failed pass (seconds), capped by the poll interval in remote mode.
#: Seconds an uncommitted PLAN.yml must stay untouched before the daemon adopts it: an agent
#: that writes a plan and commits it at once must not race the controller's adoption.
ADOPT_SETTLE = 2.0
#: Most failures are a human's git command holding a lock for a moment: retry fast first.
BACKOFF = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
#: How long a plan-file change waits for a commit to share a pass with (seconds).
FILE_DELAY = 0.3


class Daemon(Upkeep):
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
        self._compactions = 0  # the index's, at the last release (see _release_memory)

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
        self.controller.adopt_settle = ADOPT_SETTLE
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
        from controller.execution.tools import cgroup

        cgroup.announce()  # how tool calls are contained: a warning if not by cgroups
        self._pass({"start-up"})
        self.notifier.ready(self._status_line())

    def _mode(self) -> str:
        if self.config.remote is not None:
            from controller.display import masked_url  # its userinfo is a credential

            return f"remote {masked_url(self.config.remote.url)} {self.config.remote.branch}"
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
        if self.controller is not None:
            self._commit_outcomes()
        if self._ui is not None:
            self._ui.close()
        if self.controller is not None:
            self.controller.close()
        metrics.set_plans_source(None)
        log.info("daemon.stopped")
        # The self-pipe stays open: a late signal or worker may still poke it, and a closed
        # descriptor number could by then belong to another file.

    def _commit_outcomes(self) -> None:
        """Outcomes still waiting for a commit (the workers left them to a pass): commit them
        before exiting (else the next start reruns those plans from their journals)."""
        assert self.controller is not None
        try:
            self.controller.commit_finished()
        except PlangateError as exc:
            log.warning("outcomes.not_committed", code=exc.code, error=str(exc))

    # --- signals --------------------------------------------------------------------------

    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # embedded (tests): the caller stops us through request_stop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, self._on_signal)
        # The loop sleeps in select() on the self-pipe; Python runs the handler above only in
        # the main thread, once it runs bytecode again. A signal the kernel hands to another
        # thread (the page's listener, the watcher) woke nothing, and the daemon slept on to
        # its next timer, 300 s by default (CI, 2026-12-06: round 90's SIGTERM unanswered
        # for 180 s). The C-level handler writes the signal's number to the wakeups' signal
        # socket from whichever thread it runs in, at once; workers read it there too
        # (stop_requested), before the Python handler has run.
        self.wakeups.stops = frozenset({signal.SIGTERM, signal.SIGINT})
        signal.set_wakeup_fd(self.wakeups.signal_fd, warn_on_full_buffer=False)

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
        """What running plans poll between actions: a stop asked, or a SIGTERM/SIGINT the
        process has taken in whose Python handler has not run yet (``Wakeups.signalled``)."""
        return self._stop_requested or self._stopping.is_set() or self.wakeups.signalled()

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
        adopt = None
        if self.controller is not None:
            adopt, self.controller.adopt_due = self.controller.adopt_due, None
        return Timers(
            resync=now + self.config.execution.resync_interval,
            poll=None if remote is None else now + remote.poll_interval,
            retry=None if not self._failures else now + self._backoff(),
            adopt=adopt,
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
        self._release_memory()
        self.passes += 1
        self._failures = 0
        metrics.observe_reconcile(seconds)
        if self.passes == 1:  # the first pass: history indexed, the plans found decided
            log.info("daemon.ready", ms=round(seconds * 1e3, 1))
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

    def _release_memory(self) -> None:
        """After a pass that scanned a whole or long history (the first one, usually): give
        its transient heap back (the scan trims, then the rest of the pass frees more: its
        commit, the status rows). 50,000 plans: 14 MB."""
        index = getattr(self.controller, "index", None)
        compactions = getattr(index, "compactions", 0)
        if compactions != self._compactions:
            from controller.git.history import release_memory

            self._compactions = compactions
            release_memory()

    def _pass_failed(self, code: str, message: str, reasons: set[str]) -> None:
        self._failures += 1
        metrics.reconcile_failed(code, message)
        log.warning("reconcile.failed", code=code, error=message, reasons=sorted(reasons))
        if self._ui is not None and not self.passes:  # the page's "not ready" says why
            self._ui.first_pass_failed(code, message)
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

    # --- status ------------------------------------------------------------------------------

    def _status_line(self) -> str:
        running = self.running()
        what = f"running {len(running)} plan(s)" if running else "idle"
        return f"{what}; {self.passes} passes; {self._mode()}"


def _default_controller(config: Config, take_over: bool = False) -> Controller:
    from controller.service.reconcile import Controller

    return Controller(config, take_over=take_over)


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


def serve(config: Config, *, take_over: bool = False) -> int:
    """Run the daemon in the foreground until stopped; the exit code of ``plangate run``."""
    logs.configure()
    _redact_secrets(config)
    if not take_over:
        return Daemon(config).run()
    return Daemon(config, controller_factory=partial(_default_controller, take_over=True)).run()


def _redact_secrets(config: Config) -> None:
    try:
        from controller.execution.secrets import redactor_for

        redactor = redactor_for(config)
    except PlangateError as exc:
        log.warning("secrets.unreadable", code=exc.code, error=str(exc))
        return
    if redactor:
        logs.add_redactor(redactor.text)
