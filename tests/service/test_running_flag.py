"""A row's ``running`` says the same on every surface (round 117,
status-running-false-mid-run): while the daemon runs an action, ``status --json`` and MCP
``status`` (readers in processes of their own) say ``running: true`` as the page does; once
the run ended, or its controller was killed mid-action (the journal left with a start and
no end), they say false. Real daemon, real git, the real CLI and MCP server."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx

from tests.service.test_mcp import call, with_agent
from tests.support.daemonkit import free_port, running_daemon, wait_for_commit, wait_until
from tests.support.gitenv import commit_all, run_cli
from tests.support.gitkit import AGENT, ALICE

HOLD = "import os, sys, time\nwhile not os.path.exists(sys.argv[1]):\n    time.sleep(0.05)\n"
PLAN = (
    "plan:\n  name: hold\n  task: t\n  status: pending_approval\n"
    "available_tools: [{name: hold}]\nactions:\n  - id: 1\n    tool: hold\n    why: w\n"
)


def _setup(tmp_path: Path, repo: Path) -> tuple[Path, Path, int]:
    port = free_port()
    (tmp_path / "hold.py").write_text(HOLD)
    release = tmp_path / "release"
    argv = [sys.executable, str(tmp_path / "hold.py"), str(release)]
    config = tmp_path / "plangate.yml"
    config.write_text(
        textwrap.dedent(
            f"""\
            repo: {repo}
            state_dir: {tmp_path / "state"}
            approval: {{approvers: ["alice@example.com"]}}
            tools:
              hold: {{kind: exec, argv: {json.dumps(argv)}, timeout: 300}}
            ui: {{listen: {port}}}
            agent: {{identity: {{name: "{AGENT[0]}", email: "{AGENT[1]}"}}}}
            """
        )
    )
    (repo / "plans" / "hold").mkdir(parents=True)
    (repo / "plans" / "hold" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "agent: hold", AGENT)
    return config, release, port


def _approve(repo: Path) -> None:
    wait_for_commit(repo, "plangate: freeze plans/hold")
    path = repo / "plans" / "hold" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve hold", ALICE)


def _status_row(config: Path) -> dict[str, Any]:
    done = run_cli("status", "--json", "--config", str(config), cwd=config.parent)
    assert done.returncode == 0, done.stderr
    return {r["plan"]: r for r in json.loads(done.stdout)}["plans/hold"]


def _mcp_row(config: Path) -> dict[str, Any]:
    got: dict[str, Any] = {}

    async def body(session: Any) -> None:
        got.update(await call(session, "status"))

    with_agent(config, body)
    return {r["plan"]: r for r in got["plans"]}["plans/hold"]


def _api_running(port: int) -> list[str]:
    row = httpx.get(f"http://127.0.0.1:{port}/api/plan/plans/hold", timeout=10).json()["row"]
    return list((row.get("progress") or {}).get("running") or [])


def test_a_running_action_is_running_on_every_surface(tmp_path: Path, repo: Path) -> None:
    config, release, port = _setup(tmp_path, repo)
    with running_daemon(config):
        _approve(repo)
        wait_until(lambda: _api_running(port) == ["1"], 60, "action 1 running on the page")
        row, mcp = _status_row(config), _mcp_row(config)
        assert (row["status"], row["running"]) == ("executing", True), row
        assert (mcp["status"], mcp["running"]) == ("executing", True), mcp
        release.write_text("go")
        wait_for_commit(repo, "plangate: complete plans/hold", timeout=60)
        row, mcp = _status_row(config), _mcp_row(config)
        assert (row["status"], row["running"]) == ("completed", False), row
        assert mcp["running"] is False, mcp


def test_a_killed_controllers_action_is_not_running(tmp_path: Path, repo: Path) -> None:
    """The journal of a run whose controller was killed mid-action still shows action 1
    started with no end: nobody runs it, ``running`` is false (the plan stays executing)."""
    config, release, port = _setup(tmp_path, repo)
    try:
        with running_daemon(config) as daemon:
            _approve(repo)
            wait_until(lambda: _api_running(port) == ["1"], 60, "action 1 running on the page")
            assert _status_row(config)["running"] is True
            daemon.proc.kill()
            daemon.proc.wait(10)
            row = _status_row(config)
            assert (row["status"], row["running"]) == ("executing", False), row
    finally:
        release.write_text("go")  # the tool the kill left running ends (no process left over)
