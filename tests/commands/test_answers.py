"""`status` and `audit` answer a team's questions: why a plan waits, who approved what when,
whether an approval was a first approval, a gate or a resume, who rejected or aborted."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.gitenv import commit_all, git, identity, run_cli
from tests.support.gitkit import AGENT, ALICE, BOB, GATED, PLAN, approve, head_plan, write_plan


def _config(tmp_path: Path, repo: Path) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com, '*@ops.example.com']}}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    return config


def _once(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config))
    assert result.returncode == 0, result.stderr


def test_status_and_audit_answer_questions(repo: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, repo)
    write_plan(repo, "gated", GATED)
    # a distinct plan: one frozen hash runs at most once per controller (E_ALREADY_EXECUTED)
    write_plan(repo, "stopped", GATED.replace('name: "Greet"', 'name: "Greet, stopped"', 1))
    write_plan(repo, "unwanted", PLAN)
    commit_all(repo, "agent writes plans", AGENT)
    _once(config)
    approve(repo, "gated", ALICE)
    approve(repo, "stopped", ALICE)
    _once(config)
    # inside the repository, without a config: headers, and why each plan waits
    status = run_cli("status", cwd=repo)
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0].split()[:3] == ["STATUS", "PLAN", "HASH"]
    gated = lines.index(next(line for line in lines if "plans/gated" in line))
    assert "awaiting_approval" in lines[gated]
    assert "paused before action 2" in lines[gated + 1]
    unwanted = next(i for i, line in enumerate(lines) if "plans/unwanted" in line)
    assert "waiting for an approval" in lines[unwanted + 1]
    # a gate approved, an abort requested, a rejection
    approve(repo, "gated", BOB)
    run = run_cli("abort", "plans/stopped", cwd=repo, env=identity(*BOB))
    assert run.returncode == 0 and run.stdout.startswith("abort requested"), run.stderr
    reject = run_cli("reject", "plans/unwanted", "-m", "not now", cwd=repo, env=identity(*ALICE))
    assert reject.returncode == 0, reject.stderr
    _once(config)
    assert head_plan(repo, "stopped")["plan"]["status"] == "aborted"
    abort_commit = git(repo, "log", "-1", "--format=%B", "--grep=plangate: abort plans/stopped")
    assert "Aborted-By: bob@ops.example.com" in abort_commit
    report = json.loads(run_cli("audit", "--json", "--config", str(config)).stdout)
    runs = [(e["plan"], e["approval_kind"], e["outcome"]) for e in report["executions"]]
    assert ("plans/gated", "approve", "await-approval") in runs
    assert ("plans/gated", "gate", "complete") in runs
    assert ("plans/stopped", "approve", "abort") in runs
    stopped = next(e for e in report["executions"] if e["outcome"] == "abort")
    assert stopped["aborted_by"] == "bob@ops.example.com"
    for execution in report["executions"]:
        assert execution["plan_hash"].startswith("sha256:")
        assert execution["approved_at"] and execution["started_at"] and execution["finished_at"]
    decisions = {(d["kind"], d["plan"], d["by"]) for d in report["decisions"]}
    assert ("reject", "plans/unwanted", "alice@example.com") in decisions
    assert ("abort-request", "plans/stopped", "bob@ops.example.com") in decisions
    assert report["ok"], report["findings"]


def test_status_shows_each_plans_frozen_risk_and_estimate(repo: Path, tmp_path: Path) -> None:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n"
        "tools: {greet: {kind: echo, risk: high, estimate: {seconds: 30, cost_usd: 0.5}}}\n"
    )
    write_plan(repo, "risky", PLAN)
    commit_all(repo, "agent writes plans", AGENT)
    _once(config)
    rows = {
        r["plan"]: r
        for r in json.loads(run_cli("status", "--json", "--config", str(config)).stdout)
    }
    assert rows["plans/risky"]["risk"] == "high"
    assert rows["plans/risky"]["estimate"] == head_plan(repo, "risky")["frozen"]["estimate"]
    assert head_plan(repo, "risky")["frozen"]["estimate"]["seconds"] == 30
    text = run_cli("status", "--config", str(config)).stdout.splitlines()
    assert text[0].split()[:4] == ["STATUS", "PLAN", "HASH", "RISK"]
    line = next(line for line in text if "plans/risky" in line)
    assert line.split()[3] == "high"
