"""No silent plans: every plan the controller cannot freeze ends `invalid` with its errors
committed, or, when the file cannot carry a status, the log, `status` and metrics say so."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.support.daemonkit import free_port, running_daemon, wait_for_commit, wait_until
from tests.support.gitenv import commit_all, run_cli
from tests.support.gitkit import PLAN, head_plan, write_plan

TAB = PLAN.replace("  task:", "\ttask:")
FLOW = (
    '{"plan": {"name": "x", "task": "y", "status": "pending_approval"}, '
    '"available_tools": [{"name": "greet"}], '
    '"actions": [{"id": 1, "tool": "greet", "why": "w", "params": {}}]}\n'
)
CANNOT_CARRY = {
    "tab": (TAB, "E_YAML_PARSE"),
    "flow": (FLOW, "E_SCHEMA_INVALID"),
    "list": ("- a\n- b\n", "E_SCHEMA_INVALID"),
    "big": (PLAN + "# " + "x" * 5000 + "\n", "E_PLAN_TOO_LARGE"),
}
INVALID = {
    "typo": PLAN.replace("  status: pending_approval\n", "  status: pending_approval\n  x: 1\n"),
    "nostatus": PLAN.replace("  status: pending_approval\n", ""),
}


def _config(tmp_path: Path, repo: Path, extra: str = "") -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n"
        "tools: {greet: {kind: echo}}\nlimits: {max_plan_bytes: 4000}\n" + extra
    )
    return config


def _write_all(repo: Path) -> None:
    for slug, (text, _) in CANNOT_CARRY.items():
        write_plan(repo, slug, text)
    for slug, text in INVALID.items():
        write_plan(repo, slug, text)
    commit_all(repo, "agent writes plans")


def test_every_plan_gets_an_answer_from_run_once(repo: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, repo)
    _write_all(repo)
    result = run_cli("run", "--once", "--config", str(config), env={"PLANGATE_LOG_FORMAT": "json"})
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    # plans that can carry a status end `invalid`, errors with their lines, in a commit
    for slug in INVALID:
        plan = head_plan(repo, slug)
        assert plan["plan"]["status"] == "invalid", slug
        errors = plan["validation"]["errors"]
        assert errors and all({"code", "message", "path", "line"} <= set(e) for e in errors)
        assert any(e["code"] == "E_SCHEMA_INVALID" for e in errors)
        assert any(e["event"] == "plan_invalid" and e["plan"] == f"plans/{slug}" for e in events)
    typo_error = head_plan(repo, "typo")["validation"]["errors"][0]
    assert typo_error["line"] == INVALID["typo"].splitlines().index("  x: 1") + 1
    # the others are named in the log, once each, with code and line
    unreadable = {e["plan"]: e for e in events if e["event"] == "plan_unreadable"}
    assert set(unreadable) == {f"plans/{slug}" for slug in CANNOT_CARRY}
    for slug, (_, code) in CANNOT_CARRY.items():
        assert unreadable[f"plans/{slug}"]["code"] == code, slug
    tab = unreadable["plans/tab"]
    assert "tab" in tab["reason"] and "line 4, column 1" in tab["reason"] and tab["line"] == 4
    # and by `status`, with the reason
    status = json.loads(run_cli("status", "--json", "--config", str(config)).stdout)
    rows = {row["plan"]: row for row in status}
    for slug, (_, code) in CANNOT_CARRY.items():
        assert rows[f"plans/{slug}"]["status"] == "unreadable"
        assert rows[f"plans/{slug}"]["problem"]["code"] == code
    text = run_cli("status", "--config", str(config)).stdout
    assert "unreadable" in text and "tab character at line 4, column 1" in text


def test_the_daemon_counts_unreadable_plans_in_its_metrics(repo: Path, tmp_path: Path) -> None:
    port = free_port()
    config = _config(tmp_path, repo, f"metrics: {{listen: '127.0.0.1:{port}'}}\n")
    with running_daemon(config) as daemon:
        _write_all(repo)
        wait_for_commit(repo, "plangate: invalid plans/typo")
        daemon.wait_event("plan_unreadable", plan="plans/tab")

        def scraped() -> str | None:
            text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
            return text if 'plangate_plans{status="unreadable"} 4.0' in text else None

        wait_until(scraped, what="unreadable plans in the metrics")
        assert daemon.stop() == 0


def test_paths_in_logs_are_normalised(repo: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, repo)
    config.write_text(config.read_text() + "plans_dir: ./plans/\n")
    write_plan(repo, "tab", TAB)  # not committed: the controller finds it in the tree
    result = run_cli("run", "--once", "--config", str(config), env={"PLANGATE_LOG_FORMAT": "json"})
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    (event,) = [e for e in events if e["event"] == "plan_unreadable"]
    assert event["plan"] == "plans/tab" and event["file"] == "plans/tab/PLAN.yml"
