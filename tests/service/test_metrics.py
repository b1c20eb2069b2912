"""Prometheus metrics and /healthz over a real loopback HTTP server."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from controller.service import metrics


@pytest.fixture
def base_url() -> Iterator[str]:
    server = metrics.serve("127.0.0.1:0")
    host, port = server.address
    yield f"http://{host}:{port}"
    server.stop()
    metrics.disable()


def sample(text: str, name: str) -> float | None:
    """The value of one sample line (``name`` includes labels) in an exposition."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


def test_hooks_do_nothing_until_enabled() -> None:
    metrics.disable()
    metrics.observe_reconcile(0.5)
    metrics.plan_started(3.0)
    metrics.action_finished("failed")
    with metrics.time_git("fetch"):
        pass
    assert metrics.current() is None


def test_metrics_endpoint_reports_what_happened(base_url: str) -> None:
    metrics.observe_reconcile(0.02)
    metrics.plan_started(latency_s=1.5)
    metrics.action_started()
    metrics.action_finished("succeeded")
    metrics.action_finished("failed")
    metrics.plan_finished("completed")
    with metrics.time_git("fetch"):
        pass
    metrics.set_running(2)
    metrics.set_plans_source(lambda: {"pending_approval": 3, "completed": 1})
    response = httpx.get(f"{base_url}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert sample(text, 'plangate_plans{status="pending_approval"}') == 3
    assert sample(text, 'plangate_plans{status="completed"}') == 1
    assert sample(text, "plangate_running_plans") == 2
    assert sample(text, 'plangate_actions_total{outcome="failed"}') == 1
    assert sample(text, 'plangate_actions_total{outcome="succeeded"}') == 1
    assert sample(text, "plangate_actions_started_total") == 1
    assert sample(text, 'plangate_plans_finished_total{status="completed"}') == 1
    assert sample(text, "plangate_approval_latency_seconds_count") == 1
    assert sample(text, "plangate_approval_latency_seconds_sum") == 1.5
    assert sample(text, "plangate_reconcile_duration_seconds_count") == 1
    assert sample(text, 'plangate_git_operation_duration_seconds_count{operation="fetch"}') == 1


def test_a_failing_plans_source_does_not_break_scrapes(base_url: str) -> None:
    def broken() -> dict[str, int]:
        raise RuntimeError("repo gone")

    metrics.set_plans_source(broken)
    response = httpx.get(f"{base_url}/metrics")
    assert response.status_code == 200
    assert "plangate_reconcile_duration_seconds" in response.text


def test_healthz_follows_the_reconcile_loop(base_url: str) -> None:
    starting = httpx.get(f"{base_url}/healthz")
    assert starting.status_code == 503 and starting.json()["status"] == "starting"
    metrics.observe_reconcile(0.01)
    ok = httpx.get(f"{base_url}/healthz")
    assert ok.status_code == 200 and ok.json()["status"] == "ok"
    metrics.reconcile_failed("E_GIT", "fetch failed: connection refused")
    failing = httpx.get(f"{base_url}/healthz")
    assert failing.status_code == 503
    assert failing.json()["code"] == "E_GIT"
    metrics.observe_reconcile(0.01)
    assert httpx.get(f"{base_url}/healthz").status_code == 200
    assert httpx.get(f"{base_url}/nope").status_code == 404


def test_engine_events_become_metrics_through_the_log_observer() -> None:
    import io

    from controller import logs

    m = metrics.enable()
    logs.configure(stream=io.StringIO(), level="info")
    logs.add_observer(metrics.observe_event)
    try:
        log = logs.get_logger()
        log.debug("action_started", action=1)  # below the level: still counted
        log.info("action_ended", action=1, status="failed", retry=True)
        log.info("action_ended", action=1, status="succeeded", retry=False)
        log.info("plan_run_ended", outcome="completed")
        log.debug("git", op="fetch", ms=12.5)
        text = m.exposition().decode()
        assert sample(text, "plangate_actions_started_total") == 1
        assert sample(text, 'plangate_actions_total{outcome="retried"}') == 1
        assert sample(text, 'plangate_actions_total{outcome="succeeded"}') == 1
        assert sample(text, 'plangate_plans_finished_total{status="completed"}') == 1
        count = 'plangate_git_operation_duration_seconds_count{operation="fetch"}'
        assert sample(text, count) == 1
    finally:
        logs.remove_observer(metrics.observe_event)
        logs.configure()
        metrics.disable()
