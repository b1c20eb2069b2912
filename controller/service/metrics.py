"""Prometheus metrics and the health endpoint (``metrics.listen``: ``/metrics``, ``/healthz``).

Other modules report what happens through the plain functions below
(:func:`observe_reconcile`, :func:`plan_started`, :func:`action_finished`, :func:`time_git`,
...). They cost nothing and record nothing until :func:`enable` is called, which the daemon
does when ``metrics.listen`` is set; so the executor, the git layer and the CLI may call them
unconditionally. The metrics live in their own registry (not prometheus_client's global
one), so tests and several daemons in one process never collide.

Metrics (all prefixed ``plangate_``):

- ``plans{status}``: plans in the repo by ``plan.status`` (gauge, read at scrape time);
- ``running_plans``: plans executing in this process now;
- ``plans_started_total``, ``plans_finished_total{status}``;
- ``actions_started_total``, ``actions_total{outcome}`` (succeeded|failed|skipped|in_doubt);
- ``approval_latency_seconds``: approving commit to the plan's start (histogram);
- ``reconcile_duration_seconds``, ``reconcile_errors_total{code}``,
  ``last_reconcile_timestamp_seconds``;
- ``git_operation_duration_seconds{operation}`` (histogram);
- ``webhook_requests_total{result}``.

``/healthz`` answers ``200 {"status": "ok", ...}`` once a reconcile pass has succeeded and the
last one did not fail, otherwise ``503`` with ``status`` ``starting`` or ``failing`` and the
error's code and message.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from controller.logs import get_logger
from controller.service.httpd import HttpServer, QuietHandler

log = get_logger("plangate.metrics")

PlansSource = Callable[[], Mapping[str, int]]
_FAST = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_LATENCY = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 30, 60, 300, 900, 3600)


class _PlansCollector:
    """``plangate_plans{status}`` read from the daemon at scrape time, cached briefly."""

    def __init__(self, max_age: float = 5.0) -> None:
        self.source: PlansSource | None = None
        self._max_age = max_age
        self._cached: tuple[float, dict[str, int]] = (0.0, {})
        self._lock = threading.Lock()

    def _counts(self) -> dict[str, int]:
        with self._lock:
            stamp, counts = self._cached
            if self.source is not None and time.monotonic() - stamp > self._max_age:
                try:
                    counts = dict(self.source())
                except Exception as exc:  # a scrape must never take the daemon down
                    log.warning("metrics.plans_source_failed", error=str(exc))
                self._cached = (time.monotonic(), counts)
            return counts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "plangate_plans", "Plans in the repo by status", labels=["status"]
        )
        for status, count in sorted(self._counts().items()):
            family.add_metric([status], count)
        yield family


@dataclass
class Health:
    """What ``/healthz`` reports: set by the daemon's loop."""

    started: float = field(default_factory=time.time)
    last_ok: float | None = None
    last_error: tuple[str, str] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reconcile_ok(self) -> None:
        with self.lock:
            self.last_ok, self.last_error = time.time(), None

    def reconcile_failed(self, code: str, message: str) -> None:
        with self.lock:
            self.last_error = (code, message)

    def report(self) -> tuple[int, dict[str, Any]]:
        with self.lock:
            body: dict[str, Any] = {"uptime_s": round(time.time() - self.started, 3)}
            if self.last_ok is not None:
                body["last_reconcile_age_s"] = round(time.time() - self.last_ok, 3)
            if self.last_error is not None:
                body.update(status="failing", code=self.last_error[0], message=self.last_error[1])
                return 503, body
            if self.last_ok is None:
                return 503, {**body, "status": "starting"}
            return 200, {**body, "status": "ok"}


class Metrics:
    """The metric objects, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.health = Health()
        self.plans = _PlansCollector()
        self.registry.register(self.plans)
        r = self.registry
        self.running = Gauge("plangate_running_plans", "Plans executing now", registry=r)
        self.plans_started = Counter("plangate_plans_started", "Plan runs started", registry=r)
        self.plans_finished = Counter(
            "plangate_plans_finished", "Plan runs ended, by status", ["status"], registry=r
        )
        self.actions_started = Counter("plangate_actions_started", "Actions started", registry=r)
        self.actions = Counter(
            "plangate_actions", "Actions finished, by outcome", ["outcome"], registry=r
        )
        self.approval_latency = Histogram(
            "plangate_approval_latency_seconds",
            "From the approving commit to the plan's start",
            buckets=_LATENCY,
            registry=r,
        )
        self.reconcile = Histogram(
            "plangate_reconcile_duration_seconds",
            "Reconcile pass duration",
            buckets=_FAST,
            registry=r,
        )
        self.reconcile_errors = Counter(
            "plangate_reconcile_errors", "Failed reconcile passes, by code", ["code"], registry=r
        )
        self.last_reconcile = Gauge(
            "plangate_last_reconcile_timestamp_seconds", "End of the last good pass", registry=r
        )
        self.git = Histogram(
            "plangate_git_operation_duration_seconds",
            "Git operations by kind",
            ["operation"],
            buckets=_FAST,
            registry=r,
        )
        self.webhook = Counter(
            "plangate_webhook_requests", "Webhook requests, by result", ["result"], registry=r
        )

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


_metrics: Metrics | None = None
_enable_lock = threading.Lock()


def enable() -> Metrics:
    """Start recording (idempotent); returns the process's metrics."""
    global _metrics
    with _enable_lock:
        if _metrics is None:
            _metrics = Metrics()
        return _metrics


def disable() -> None:
    """Stop recording and forget everything (tests, config reload without metrics)."""
    global _metrics
    with _enable_lock:
        _metrics = None


def current() -> Metrics | None:
    return _metrics


# --- hooks: no-ops until enable() ---------------------------------------------------------


def observe_reconcile(seconds: float) -> None:
    """A reconcile pass ended well after ``seconds``."""
    if (m := _metrics) is not None:
        m.reconcile.observe(seconds)
        m.last_reconcile.set(time.time())
        m.health.reconcile_ok()


def reconcile_failed(code: str, message: str) -> None:
    """A reconcile pass failed with an error code (E_GIT, ...)."""
    if (m := _metrics) is not None:
        m.reconcile_errors.labels(code=code).inc()
        m.health.reconcile_failed(code, message)


def plan_started(latency_s: float | None = None) -> None:
    """A plan started running; ``latency_s`` from its approving commit, when known."""
    if (m := _metrics) is not None:
        m.plans_started.inc()
        if latency_s is not None and latency_s >= 0:
            m.approval_latency.observe(latency_s)


def plan_finished(status: str) -> None:
    """A plan run ended: completed, failed, awaiting_approval, aborted or stopped."""
    if (m := _metrics) is not None:
        m.plans_finished.labels(status=status).inc()


def action_started() -> None:
    if (m := _metrics) is not None:
        m.actions_started.inc()


def action_finished(outcome: str) -> None:
    """An action ended: succeeded, failed, skipped or in_doubt."""
    if (m := _metrics) is not None:
        m.actions.labels(outcome=outcome).inc()


def observe_git(operation: str, seconds: float) -> None:
    if (m := _metrics) is not None:
        m.git.labels(operation=operation).observe(seconds)


@contextmanager
def time_git(operation: str) -> Iterator[None]:
    """Time a git operation (``fetch``, ``push``, ``commit``, ``scan``, ...)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        observe_git(operation, time.perf_counter() - start)


def set_running(count: int) -> None:
    if (m := _metrics) is not None:
        m.running.set(count)


def set_plans_source(source: PlansSource | None) -> None:
    """Where ``plangate_plans{status}`` comes from (called at scrape time)."""
    if (m := _metrics) is not None:
        m.plans.source = source


def webhook_request(result: str) -> None:
    if (m := _metrics) is not None:
        m.webhook.labels(result=result).inc()


def observe_event(event: Mapping[str, Any]) -> None:
    """Follow the engine's and the git layer's log events (a :func:`logs.add_observer` hook).

    ``action_ended`` -> ``actions_total{outcome}`` (``retried`` for a failed attempt that
    will be retried); ``action_started`` -> ``actions_started_total``; ``plan_run_ended`` ->
    ``plans_finished_total{status}``; ``git`` events with ``op`` and ``ms`` -> git durations.
    """
    m = _metrics
    if m is None:
        return
    name = event.get("event")
    if name == "action_ended":
        outcome = "retried" if event.get("retry") else str(event.get("status") or "unknown")
        m.actions.labels(outcome=outcome).inc()
    elif name == "action_started":
        m.actions_started.inc()
    elif name == "plan_run_ended":
        m.plans_finished.labels(status=str(event.get("outcome") or "unknown")).inc()
    elif name == "git" and isinstance(event.get("ms"), int | float):
        m.git.labels(operation=str(event.get("op") or "git")).observe(float(event["ms"]) / 1000)


# --- the endpoint ----------------------------------------------------------------------------


class _Handler(QuietHandler):
    def do_GET(self) -> None:
        m = _metrics
        path = self.path.split("?", 1)[0]
        if m is None:
            self.send_body(503, b"metrics disabled\n", "text/plain")
        elif path == "/metrics":
            self.send_body(200, m.exposition(), CONTENT_TYPE_LATEST)
        elif path in ("/healthz", "/health"):
            status, body = m.health.report()
            self.send_body(status, json.dumps(body).encode() + b"\n", "application/json")
        else:
            self.send_body(404, b"try /metrics or /healthz\n", "text/plain")

    do_HEAD = do_GET


def serve(listen: str) -> HttpServer:
    """Enable metrics and serve them on ``listen`` (``host:port``) from a thread."""
    enable()
    return HttpServer(listen, "metrics.listen", _Handler).start()
