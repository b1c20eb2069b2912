"""A controller that lost part of its state directory mid-run (SPEC §15, docs/execution.md).

What an operator relies on: the history index is a cache (deleting it never strands a run:
the plan executing by the controller's own start commit becomes a job again and continues
from its journal); a lost journal or a lost state directory never runs a started action
again (the plan ends E_ACTION_IN_DOUBT). Real ``plangate run --once`` killed mid-action by
its own tool (SIGKILL), real git.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.gitenv import commit_all, run_cli

# Records each call; the first call kills the controller (its parent) mid-action.
KILLER = """\
import json, os, signal, sys
with open(sys.argv[1], "a") as f:
    f.write(sys.argv[2] + "\\n")
if not os.path.exists(sys.argv[3]):
    open(sys.argv[3], "w").close()
    os.kill(os.getppid(), signal.SIGKILL)
print("{}")
"""

PLAN = """\
plan:
  name: "two steps"
  task: "first kills the controller once"
  status: pending_approval
available_tools:
  - name: step
actions:
  - id: 1
    tool: step
    why: "first"
    params: {n: "one"}
  - id: 2
    tool: step
    why: "second"
    params: {n: "two"}
"""


def _setup(tmp_path: Path, repo: Path, idempotent: bool) -> tuple[Path, Path]:
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    calls = tmp_path / "calls.txt"
    argv = [sys.executable, str(killer), str(calls), "{n}", str(tmp_path / "killed")]
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools: {{step: {{kind: exec, argv: {json.dumps(argv)}, "
        f"idempotent: {str(idempotent).lower()}}}}}\n"
    )
    (repo / "plans" / "two").mkdir(parents=True)
    (repo / "plans" / "two" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "propose", ("Agent", "agent@example.com"))
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    path = repo / "plans" / "two" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve", ("Alice", "alice@example.com"))
    crashed = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert crashed.returncode != 0  # killed by its tool mid-action 1
    (tmp_path / "state" / "lock").unlink(missing_ok=True)
    return config, calls


def _status(config: Path) -> dict:  # type: ignore[type-arg]
    result = run_cli("status", "--json", "--config", str(config))
    assert result.returncode == 0, result.stderr
    return next(r for r in json.loads(result.stdout) if r["plan"] == "plans/two")


def test_a_deleted_index_never_strands_a_run(tmp_path: Path, repo: Path) -> None:
    config, calls = _setup(tmp_path, repo, idempotent=True)
    (tmp_path / "state" / "index.sqlite").unlink()  # the cache goes; the journal stays
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0, result.stderr[-1500:]
    assert "run_adopted" in result.stderr
    assert _status(config)["status"] == "completed"
    # action 1 was idempotent: run again after the crash; action 2 once
    assert calls.read_text().split() == ["one", "one", "two"]


@pytest.mark.parametrize("lost", ["journal", "state directory"])
def test_a_lost_journal_or_state_directory_runs_nothing_again(
    tmp_path: Path, repo: Path, lost: str
) -> None:
    config, calls = _setup(tmp_path, repo, idempotent=False)
    state = tmp_path / "state"
    shutil.rmtree(state / "journal" if lost == "journal" else state)
    take = ["--take-over"] if lost != "journal" else []  # lost for good: told (round 70)
    result = run_cli("run", "--once", *take, "--config", str(config), timeout=120)
    assert result.returncode == 0, result.stderr[-1500:]
    row = _status(config)
    assert row["status"] == "failed", row
    assert "E_ACTION_IN_DOUBT" in json.dumps(row), row
    assert calls.read_text().split() == ["one"]  # never again


def test_an_in_doubt_verdict_waiting_for_its_commit_sticks(tmp_path: Path, repo: Path) -> None:
    """A lost journal's E_ACTION_IN_DOUBT outcome whose commit has to wait (a person's
    uncommitted edit of the plan file) is the run's verdict: the passes after it report it
    again and run nothing (the journal then holds that outcome, no longer empty: it was read
    as a run to go on with, and action 1 ran again); once the edit is gone it is committed."""
    config, calls = _setup(tmp_path, repo, idempotent=False)
    shutil.rmtree(tmp_path / "state" / "journal")
    path = repo / "plans" / "two" / "PLAN.yml"
    kept = path.read_text()
    path.write_text(kept + "# a note, not committed\n")  # the hash is the same: it may run
    for _ in range(2):
        result = run_cli("run", "--once", "--config", str(config), timeout=120)
        assert result.returncode == 0, result.stderr[-1500:]
    assert calls.read_text().split() == ["one"]  # never again
    path.write_text(kept)
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0, result.stderr[-1500:]
    row = _status(config)
    assert row["status"] == "failed", row
    assert "E_ACTION_IN_DOUBT" in json.dumps(row), row
    assert calls.read_text().split() == ["one"]
