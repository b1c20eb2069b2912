"""``plangate run`` in local mode, end to end: the real process on a real working tree.

An agent writes a PLAN.yml (not committed), the daemon freezes and commits it, a human
approves it by commit, the daemon runs it and commits the outcome and EXECUTION_LOG.md.
Then: stopping cleanly mid-plan, SIGKILL and restart, one controller per state directory,
reloading the config, systemd notifications, metrics.
"""

from __future__ import annotations

import signal
import socket
import sys
import textwrap
import time
from pathlib import Path

import httpx

from tests.support.daemonkit import (
    free_port,
    running_daemon,
    wait_for_commit,
    wait_until,
)
from tests.support.gitenv import AGENT, commit_all, git, identity, run_cli
from tests.support.gitkit import ALICE, BOB, approve, head_plan, write_plan

SLOW_TOOL = """\
import json, sys, time
marker, seconds = sys.argv[1], float(sys.argv[2])
with open(marker, "a") as f:
    f.write("start\\n")
time.sleep(seconds)
with open(marker, "a") as f:
    f.write("end\\n")
print(json.dumps({"slept": seconds}))
"""

TWO_SLOW = """\
plan:
  name: "Slow"
  task: "Two slow steps"
  status: pending_approval
available_tools:
  - name: slow
actions:
  - id: 1
    tool: slow
    why: "first"
    params: {n: 1}
  - id: 2
    tool: slow
    why: "second"
    params: {n: 2}
"""


def write_config(
    tmp_path: Path, repo: Path, extra: str = "", idempotent: bool = False, seconds: float = 1.5
) -> Path:
    tool = tmp_path / "slow.py"
    tool.write_text(SLOW_TOOL)
    config = tmp_path / "plangate.yml"
    config.write_text(
        textwrap.dedent(
            f"""\
            repo: {repo}
            approval:
              approvers: ["alice@example.com"]
            tools:
              greet: {{kind: echo}}
              slow:
                kind: exec
                argv: ["{sys.executable}", "{tool}", "{tmp_path}/marker-{{n}}", "{seconds}"]
                idempotent: {str(idempotent).lower()}
            """
        )
        + extra
    )
    return config


def marker(tmp_path: Path, n: int) -> list[str]:
    path = tmp_path / f"marker-{n}"
    return path.read_text().split() if path.exists() else []


def test_agent_plan_is_frozen_approved_executed_and_logged(repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, repo)
    with running_daemon(config) as daemon:
        daemon.wait_started()
        write_plan(repo)  # the agent does not commit
        wait_for_commit(repo, "plangate: freeze plans/greet")
        assert head_plan(repo)["frozen"]["hash"].startswith("sha256:")
        approve(repo, who=ALICE)
        wait_for_commit(repo, "plangate: complete plans/greet")
        plan = head_plan(repo)
        assert plan["plan"]["status"] == "completed"
        assert plan["execution"]["actions"][0]["status"] == "succeeded"
        log = git(repo, "show", "HEAD:plans/greet/EXECUTION_LOG.md")
        assert "alice@example.com" in log
        status = run_cli("status", "--json", "--config", str(config), cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        assert '"completed"' in status.stdout
        assert daemon.stop() == 0
    assert git(repo, "status", "--porcelain") == ""
    started = [e for e in daemon.events() if e.get("event") == "plan.starting"]
    assert (
        started and started[0]["plan"] == "plans/greet" and started[0]["hash"].startswith("sha256:")
    )


def test_a_plan_committed_by_a_merge_is_noticed(repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, repo)
    git(repo, "switch", "-q", "-c", "proposal")
    write_plan(repo, "merged")
    commit_all(repo, "agent proposes")
    git(repo, "switch", "-q", "main")
    with running_daemon(config) as daemon:
        daemon.wait_started()
        git(repo, "merge", "-q", "--no-ff", "-m", "merge proposal", "proposal")
        wait_for_commit(repo, "plangate: freeze plans/merged")
        assert daemon.stop() == 0


def _slow_plan(
    tmp_path: Path, repo: Path, *, idempotent: bool = False, seconds: float = 1.5
) -> Path:
    """The config, and an agent's committed plan of two slow actions (``seconds`` each)."""
    config = write_config(tmp_path, repo, idempotent=idempotent, seconds=seconds)
    write_plan(repo, "slow", TWO_SLOW)
    commit_all(repo, "agent writes a slow plan")
    return config


def _approve_and_wait_for_action(repo: Path, tmp_path: Path, action: int) -> None:
    """Once the running daemon froze the slow plan: approve it, wait until ``action`` runs."""
    wait_for_commit(repo, "plangate: freeze plans/slow")
    approve(repo, "slow", ALICE)
    wait_until(lambda: marker(tmp_path, action) == ["start"], 60, f"action {action} to start")


def test_sigterm_lets_the_running_action_finish_then_resumes(repo: Path, tmp_path: Path) -> None:
    config = _slow_plan(tmp_path, repo)
    with running_daemon(config) as daemon:
        _approve_and_wait_for_action(repo, tmp_path, 1)
        assert daemon.stop(signal.SIGTERM) == 0
    assert marker(tmp_path, 1) == ["start", "end"]  # finished, not killed
    assert marker(tmp_path, 2) == []  # never started
    plan = head_plan(repo, "slow")
    assert plan["plan"]["status"] == "executing"
    assert [a["status"] for a in plan["execution"]["actions"]][:1] == ["succeeded"]
    assert git(repo, "status", "--porcelain") == ""
    with running_daemon(config) as daemon:
        wait_for_commit(repo, "plangate: complete plans/slow")
        assert daemon.stop() == 0
    assert marker(tmp_path, 1) == ["start", "end"]  # never run twice
    assert marker(tmp_path, 2) == ["start", "end"]


def test_a_second_signal_exits_at_once(repo: Path, tmp_path: Path) -> None:
    # an action far longer than the two signals take to send (1.5 s ended before the second
    # signal on a loaded CI once: the daemon had exited 0 on its own)
    config = _slow_plan(tmp_path, repo, seconds=30)
    with running_daemon(config) as daemon:
        _approve_and_wait_for_action(repo, tmp_path, 1)
        daemon.send(signal.SIGTERM)
        daemon.wait_event("daemon.stopping")
        assert daemon.stop(signal.SIGTERM) == 128 + signal.SIGTERM
        assert marker(tmp_path, 1) == ["start"]  # did not wait for the action


def test_sigkill_and_restart_never_reruns_a_finished_action(repo: Path, tmp_path: Path) -> None:
    config = _slow_plan(tmp_path, repo, idempotent=True)
    with running_daemon(config) as daemon:
        _approve_and_wait_for_action(repo, tmp_path, 2)
        daemon.kill()
    with running_daemon(config) as daemon:
        wait_for_commit(repo, "plangate: complete plans/slow", 60)
        assert daemon.stop() == 0
    assert marker(tmp_path, 1) == ["start", "end"]
    # In doubt and idempotent: re-run, after the killed daemon's orphaned tool was stopped.
    assert marker(tmp_path, 2).count("start") == 2
    assert head_plan(repo, "slow")["plan"]["status"] == "completed"


def test_sigkill_with_a_non_idempotent_action_in_doubt_fails_the_plan(
    repo: Path, tmp_path: Path
) -> None:
    config = _slow_plan(tmp_path, repo, idempotent=False)
    with running_daemon(config) as daemon:
        _approve_and_wait_for_action(repo, tmp_path, 1)
        daemon.kill()
    with running_daemon(config) as daemon:
        wait_for_commit(repo, "plangate: fail plans/slow", 60)
        assert daemon.stop() == 0
    assert marker(tmp_path, 1).count("start") == 1  # never run a second time
    plan = head_plan(repo, "slow")
    assert plan["plan"]["status"] == "failed"
    assert plan["execution"]["actions"][0]["error"]["code"] == "E_ACTION_IN_DOUBT"


def test_a_second_daemon_on_the_same_state_dir_exits_2(repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, repo)
    with running_daemon(config) as first:
        first.wait_started()
        second = run_cli("run", "--config", str(config), cwd=tmp_path, timeout=60)
        assert second.returncode == 2
        assert "E_LOCKED" in second.stderr and f"pid={first.proc.pid}" in second.stderr
        assert first.stop() == 0


def test_sighup_reloads_approvers_and_survives_a_bad_config(repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, repo)
    with running_daemon(config) as daemon:
        daemon.wait_started()
        good = config.read_text()
        config.write_text(good + "bogus_key: 1\n")
        daemon.send(signal.SIGHUP)
        daemon.wait_event("config.reload_refused", code="E_CONFIG_INVALID")
        config.write_text(good.replace("alice@example.com", "*@ops.example.com"))
        daemon.send(signal.SIGHUP)
        daemon.wait_event("config.reloaded")
        # the new config is recorded (.plangate/policy.json) by the next pass, on its own
        daemon.wait_event("policy_recorded", changed=["approval.approvers"])
        wait_until(lambda: git(repo, "status", "--porcelain") == "", 30, "a clean tree")
        write_plan(repo)
        commit_all(repo, "agent")
        wait_for_commit(repo, "plangate: freeze plans/greet")
        approve(repo, who=BOB)  # allowed only by the reloaded config
        wait_for_commit(repo, "plangate: complete plans/greet")
        assert daemon.stop() == 0


def test_systemd_notifications(repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, repo)
    sock_path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.settimeout(30)
    messages: list[str] = []

    def wait_message(key: str) -> None:
        while not any(key in m.splitlines() for m in messages):
            messages.append(sock.recv(4096).decode())

    env = {"NOTIFY_SOCKET": str(sock_path), "WATCHDOG_USEC": "200000"}
    try:
        with running_daemon(config, env=env) as daemon:
            wait_message("READY=1")
            ready = next(m for m in messages if "READY=1" in m.splitlines())
            assert "STATUS=" in ready
            wait_message("WATCHDOG=1")
            daemon.send(signal.SIGTERM)
            wait_message("STOPPING=1")
            assert daemon.wait() == 0
    finally:
        sock.close()


def test_metrics_and_health_of_a_running_daemon(repo: Path, tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path, repo, extra=f"metrics: {{listen: '127.0.0.1:{port}'}}\n")
    with running_daemon(config) as daemon:
        write_plan(repo)
        commit_all(repo, "agent")
        wait_for_commit(repo, "plangate: freeze plans/greet")
        approve(repo, who=ALICE)
        wait_for_commit(repo, "plangate: complete plans/greet")
        base = f"http://127.0.0.1:{port}"
        health = httpx.get(f"{base}/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok"

        def scraped() -> str | None:
            text = httpx.get(f"{base}/metrics").text
            return text if 'plangate_plans{status="completed"} 1.0' in text else None

        text = wait_until(scraped, what="completed plan in metrics")
        assert "plangate_reconcile_duration_seconds_count" in text
        assert "plangate_plans_started_total 1.0" in text
        assert 'plangate_actions_total{outcome="succeeded"} 1.0' in text
        assert 'plangate_plans_finished_total{status="completed"} 1.0' in text
        assert daemon.stop() == 0


def test_bad_config_exits_2_without_traceback(tmp_path: Path) -> None:
    config = tmp_path / "plangate.yml"
    config.write_text("repo: /nonexistent\nnot_a_key: 1\n")
    result = run_cli("run", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 2
    assert "E_CONFIG_INVALID" in result.stderr and "Traceback" not in result.stderr


def test_webhook_without_secret_exits_2(repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, repo, extra="webhook: {listen: '127.0.0.1:0'}\n")
    result = run_cli("run", "--config", str(config), cwd=tmp_path, timeout=60)
    assert result.returncode == 2
    assert "PLANGATE_WEBHOOK_SECRET" in result.stderr


def test_a_plan_the_agent_commits_at_once_is_its_own_not_adopted(
    repo: Path, tmp_path: Path
) -> None:
    """An agent writes PLAN.yml and commits it straight away: the daemon must not adopt the
    file in between (its commit would then fail or be empty, and git would name the
    controller as the plan's author). An uncommitted file is adopted only once it settled."""
    config = write_config(tmp_path, repo)
    with running_daemon(config) as daemon:
        daemon.wait_event("daemon.started")
        for n in range(4):
            write_plan(repo, f"p{n}")
            _agent_commit(repo, f"plans/p{n}", f"agent proposes p{n}")
        for n in range(4):
            wait_for_commit(repo, f"plangate: freeze plans/p{n}")
        write_plan(repo, "left")  # never committed: adopted once it has settled
        wait_for_commit(repo, "plangate: freeze plans/left")
        assert daemon.stop() == 0
    for n in range(4):
        added = git(repo, "log", "--diff-filter=A", "--format=%ae", "--", f"plans/p{n}/PLAN.yml")
        assert added.split() == ["agent@example.com"], (n, added)


def _agent_commit(repo: Path, folder: str, message: str) -> None:
    """Commit the agent's own folder, as an agent would (never `add -A` in a tree the
    controller writes), and again when the controller moved the branch between git reading
    HEAD and updating it (git's "cannot lock ref") or held the index at that moment
    (".git/index.lock": File exists), as git itself tells an agent to."""
    for _ in range(20):
        try:
            git(repo, "add", folder)
            git(repo, "commit", "-q", "-m", message, "--", folder, env=identity(*AGENT))
            return
        except AssertionError as exc:
            if "cannot lock ref" not in str(exc) and "index.lock" not in str(exc):
                raise
            time.sleep(0.1)
    raise AssertionError(f"could not commit {message!r}")
