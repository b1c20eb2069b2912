"""Structured logs: JSON lines off a terminal, plan and hash on every event, secrets redacted."""

from __future__ import annotations

import io
import json
import logging
import sys
import threading
from collections.abc import Iterator

import pytest

from controller import logs


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    out = io.StringIO()
    logs.configure(stream=out)
    yield out
    logs.configure()


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_lines_when_not_a_tty(stream: io.StringIO) -> None:
    logs.get_logger().info("reconcile.done", jobs=2)
    (event,) = lines(stream)
    assert event["event"] == "reconcile.done" and event["jobs"] == 2
    assert event["level"] == "info" and str(event["timestamp"]).endswith("Z")


def test_plan_context_reaches_every_event_in_the_block(stream: io.StringIO) -> None:
    log = logs.get_logger()
    with logs.plan_context("plans/rotate", "sha256:abc"):
        log.info("action.start", action=1)
        logging.getLogger("some.library").warning("from the stdlib")
    log.info("outside")
    first, second, third = lines(stream)
    assert (first["plan"], first["hash"]) == ("plans/rotate", "sha256:abc")
    assert second["plan"] == "plans/rotate" and second["event"] == "from the stdlib"
    assert "plan" not in third


def test_context_is_per_thread(stream: io.StringIO) -> None:
    log = logs.get_logger()
    with logs.plan_context("plans/a", "sha256:1"):
        worker = threading.Thread(target=lambda: log.info("in.worker"))
        worker.start()
        worker.join()
    (event,) = lines(stream)
    assert "plan" not in event


def test_redactors_apply_to_everything(stream: io.StringIO) -> None:
    logs.add_redactor(lambda text: text.replace("hunter2", "***"))
    logs.get_logger().info("tool.output", result={"stdout": ["token hunter2"]}, note="hunter2")
    text = stream.getvalue()
    assert "hunter2" not in text and "***" in text


def test_console_on_a_tty() -> None:
    out = Tty()
    logs.configure(stream=out)
    try:
        logs.get_logger().info("hello.console", plan="plans/x")
        text = out.getvalue()
        assert "hello.console" in text and not text.lstrip().startswith("{")
    finally:
        logs.configure()


def test_level_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_LOG_LEVEL", "warning")
    out = io.StringIO()
    logs.configure(stream=out)
    try:
        logs.get_logger().info("quiet")
        logs.get_logger().warning("loud")
        assert [e["event"] for e in lines(out)] == ["loud"]
    finally:
        monkeypatch.delenv("PLANGATE_LOG_LEVEL")
        logs.configure()


def _raise_with(secret: str) -> None:
    raise RuntimeError(f"could not reach https://api.example/?token={secret}")


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "console"])
def test_secret_in_an_exception_is_redacted(as_json: bool) -> None:
    """An exception message quoting a secret is hidden in its traceback, in both formats,
    from structlog and from a standard-library logger alike."""
    out = io.StringIO()
    logs.configure(stream=out, as_json=as_json)
    logs.add_redactor(lambda text: text.replace("s3cr3t-exc", "***"))
    try:
        try:
            _raise_with("s3cr3t-exc")
        except RuntimeError as exc:
            logs.get_logger().exception("action.failed")
            logging.getLogger("some.library").error("failed", exc_info=exc)
        text = out.getvalue()
        assert text.count("RuntimeError: could not reach") == 2
        assert "s3cr3t-exc" not in text and "token=***" in text
    finally:
        logs.configure()


def test_an_exception_logged_later_keeps_its_traceback(stream: io.StringIO) -> None:
    """exc_info captured in an except block and logged after it is still rendered."""
    logs.add_redactor(lambda text: text.replace("s3cr3t-later", "***"))
    try:
        _raise_with("s3cr3t-later")
    except RuntimeError:
        captured = sys.exc_info()
    logs.get_logger().error("action.failed", exc_info=captured)
    (event,) = lines(stream)
    assert "RuntimeError" in str(event["exception"]) and "token=***" in str(event["exception"])


def test_secret_in_a_mapping_key_is_redacted(stream: io.StringIO) -> None:
    logs.add_redactor(lambda text: text.replace("s3cr3t-key", "***"))
    logs.get_logger().info("tool.output", result={"s3cr3t-key": 1})
    assert "s3cr3t-key" not in stream.getvalue() and "***" in stream.getvalue()
