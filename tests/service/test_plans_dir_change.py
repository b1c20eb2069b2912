"""A ``plans_dir`` change rebuilds the controller's history index (round 125, atk125p): the
index read the new folder only from the restart on (a plan written there before was never
read) and kept the old folder's rows, so ``status`` showed ``plans/p3`` "waiting for an
approval" the controller no longer read. Now a plans folder's whole history is read, as
``check`` and the audit read it, and ``status`` lists today's folder only; an index from
before, which names no folder, is rebuilt when it holds a plan outside today's.

Real repos and the real ``plangate run --once`` and ``status`` in subprocesses.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.support.gitenv import AGENT, commit_all, git, run_cli
from tests.support.gitkit import PLAN

CONFIG = """\
repo: {repo}
state_dir: {state}
plans_dir: {folder}
approval:
  approvers: ["alice@example.com"]
tools:
  greet: {{kind: echo}}
"""


def configure(repo: Path, folder: str) -> Path:
    config = repo.parent / "plangate.yml"
    config.write_text(CONFIG.format(repo=repo, state=repo.parent / "state", folder=folder))
    return config


def write(repo: Path, plan: str) -> None:
    path = repo / plan / "PLAN.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLAN.replace("Say hello to the world", f"Say hello to {plan}"))


def cli(*args: str) -> str:
    result = run_cli(*args, timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.stdout


def rows(config: Path) -> dict[str, str]:
    listed = json.loads(cli("status", "--json", "--config", str(config)))
    return {row["plan"]: row["status"] for row in listed}


def changed_to_ops(repo: Path, *, forget_folder: bool) -> Path:
    """``plans/p1`` frozen under ``plans``; ``ops/o1`` written, then the folder changed."""
    config = configure(repo, "plans")
    write(repo, "plans/p1")
    commit_all(repo, "agent: plans/p1", AGENT)
    cli("run", "--once", "--config", str(config))
    write(repo, "ops/o1")  # before the controller reads with the new folder
    commit_all(repo, "agent: ops/o1", AGENT)
    cli("run", "--once", "--config", str(config))  # the index has read past it, as plans
    if forget_folder:  # an index written before it named its folder
        with sqlite3.connect(repo.parent / "state" / "index.sqlite") as db:
            db.execute("DELETE FROM meta WHERE key = 'plans_dir'")
    return configure(repo, "ops")


def test_the_new_folder_is_read_from_the_start_and_the_old_one_is_gone(repo: Path) -> None:
    config = changed_to_ops(repo, forget_folder=False)
    assert rows(config) == {"ops/o1": "pending_approval"}
    cli("run", "--once", "--config", str(config))
    assert "plangate: freeze ops/o1" in git(repo, "log", "--format=%s")
    assert rows(config) == {"ops/o1": "pending_approval"}


def test_an_index_from_before_holding_the_old_folder_is_rebuilt(repo: Path) -> None:
    config = changed_to_ops(repo, forget_folder=True)
    assert rows(config) == {"ops/o1": "pending_approval"}
