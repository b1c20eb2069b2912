"""Webhook and start-up as a team meets them: a push for another branch is ignored whatever
its content type, the documented curl works, and a missing secret stops the daemon before
any listener starts, naming the config file and line."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from controller.service import webhook
from controller.settings import config_from_data
from tests.support.daemonkit import free_port
from tests.support.gitenv import ROOT, run_cli

SECRET = "s3cret-for-tests"


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    config = config_from_data(
        {
            "remote": {"url": "git://127.0.0.1/plans.git", "branch": "main"},
            "state_dir": str(tmp_path / "state"),
            "webhook": {"listen": "127.0.0.1:0"},
        }
    )
    pushes: list[str] = []
    server = webhook.serve(config, pushes.append, env={"PLANGATE_WEBHOOK_SECRET": SECRET})
    host, port = server.address
    yield f"http://{host}:{port}/webhook", pushes
    server.stop()


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/x-www-form-urlencoded", "text/plain", None]
)
@pytest.mark.parametrize("encoding", ["json", "form"])
def test_a_push_for_another_branch_is_ignored_whatever_the_content_type(
    endpoint: tuple[str, list[str]], content_type: str | None, encoding: str
) -> None:
    url, pushes = endpoint
    payload = '{"ref": "refs/heads/feature"}'
    body = payload if encoding == "json" else "payload=" + urllib.parse.quote(payload)
    headers = {"X-Plangate-Secret": SECRET}
    if content_type:
        headers["Content-Type"] = content_type
    response = httpx.post(url, content=body.encode(), headers=headers)
    assert response.status_code == 202 and response.json()["status"] == "ignored"
    assert pushes == []
    assert response.headers["Server"] == "plangate"  # no trailing space


def test_the_documented_curl_is_accepted(endpoint: tuple[str, list[str]]) -> None:
    url, pushes = endpoint
    docs = (ROOT / "docs" / "operations.md").read_text()
    command = re.search(r"curl -fsS -X POST .*?webhook", docs, re.S)
    assert command is not None
    text = command.group(0).replace("\\\n", " ")
    headers = dict(h.split(": ", 1) for h in re.findall(r'-H "([^"]+)"', text))
    body = re.search(r"-d '([^']*)'", text)
    assert headers.get("Content-Type") == "application/json" and body is not None
    headers["X-Plangate-Secret"] = SECRET
    response = httpx.post(url, content=body.group(1).encode(), headers=headers)
    assert response.status_code == 202 and response.json()["status"] == "accepted"
    assert pushes == ["webhook:plain"]


def test_a_missing_secret_stops_the_daemon_before_any_listener(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    metrics_port, hook_port = free_port(), free_port()
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\n"
        f"metrics: {{listen: '127.0.0.1:{metrics_port}'}}\n"
        "webhook:\n"
        f"  listen: '127.0.0.1:{hook_port}'\n"
    )
    env = {"PLANGATE_WEBHOOK_SECRET": "", "PLANGATE_LOG_FORMAT": "json"}
    result = run_cli("run", "--config", str(config), env=env)
    assert result.returncode == 2, result.stderr
    assert "E_CONFIG_INVALID" in result.stderr and "PLANGATE_WEBHOOK_SECRET" in result.stderr
    assert f"{config}:4:" in result.stderr  # the file and the line of webhook.listen
    assert "http.listening" not in result.stderr  # no endpoint was ever opened
