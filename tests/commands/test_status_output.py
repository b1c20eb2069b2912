"""``plangate status --json`` prints JSON and nothing else on stdout, whatever it logs.

A read-only command starts without structlog and imports it only when something is logged;
unconfigured, structlog writes to stdout, so a problem the history scan met (a plan version
over ``limits.max_plan_bytes``) came out as a text line ahead of the JSON (seen under round
31's labs: ``JSONDecodeError: Extra data``). Logs go to stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.gitenv import ROOT, commit_all, git
from tests.support.plantext import greet_plan


def test_status_json_is_alone_on_stdout_when_the_scan_logs(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "plans" / "big").mkdir(parents=True)
    (repo / "plans" / "ok").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "plans" / "ok" / "PLAN.yml").write_text(greet_plan("ok", "a plan", '"x"'))
    (repo / "plans" / "big" / "PLAN.yml").write_text("# " + "x" * 5000 + "\n")
    commit_all(repo, "two plans, one too large")
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "tools:\n  greet: {kind: echo}\nlimits: {max_plan_bytes: 4000}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "controller", "status", "--json", "--config", str(config)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rows = {row["plan"]: row for row in json.loads(result.stdout)}  # JSON and nothing else
    assert set(rows) >= {"plans/ok", "plans/big"}
    assert "E_PLAN_TOO_LARGE" in json.dumps(rows["plans/big"])
    assert "plan_problem" in result.stderr and "E_PLAN_TOO_LARGE" in result.stderr


def test_status_text_columns_fit_a_long_plan_path_and_address(tmp_path: Path) -> None:
    """A plan path or an approver's address longer than its column widens the column for
    every row (never cut: a cut path could read as another plan), so each row's last event
    starts under its header."""
    from tests.support.gitenv import run_cli

    repo = tmp_path / "repo"
    long_slug = "a-plan-whose-folder-name-is-longer-than-the-plan-column"
    for slug in ("ok", long_slug):
        (repo / "plans" / slug).mkdir(parents=True)
        (repo / "plans" / slug / "PLAN.yml").write_text(greet_plan(slug, "a plan", '"x"'))
    git(repo.parent, "init", "-q", "-b", "main", str(repo))
    commit_all(repo, "two plans")
    result = run_cli("status", cwd=repo)
    assert result.returncode == 0, result.stderr
    header, *lines = result.stdout.splitlines()
    column = header.index("LAST EVENT")
    rows = [line for line in lines if line.startswith(("draft", "pending"))]
    assert len(rows) == 2 and any(f"plans/{long_slug} " in row for row in rows)
    assert all(row[column - 1] == " " and row[column] != " " for row in rows), result.stdout
