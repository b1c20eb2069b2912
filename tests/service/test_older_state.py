"""A state directory older than the branch never takes its journal as a run's last word
(SPEC §15, docs/operations.md Restore; round 72).

What an operator relies on: a state directory restored from a copy (a backup, a filesystem
snapshot taken while the controller ran) that finds commits its key sealed after the copy
(``own_commits_restored``) knows it is older than the branch, its journals with it: every run
open on the branch (started, no outcome committed) has its journal set aside and fails
``E_ACTION_IN_DOUBT``, nothing of it run, until a person approves a resume (which runs it
once). A state directory that is not older than the branch (nothing adopted: a plain
restart after a crash) goes on from its journal as before. Real ``plangate run --once``
killed before and in an action, real git.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.service.test_state_loss import KILLER, PLAN  # the same killer tool and plan
from tests.support.gitenv import commit_all, git, identity, run_cli
from tests.support.plantext import greet_plan

#: Kill the controller before action 1's start is journaled: the journal holds the begin only.
BEFORE_ACTION_1 = {"PLANGATE_TEST_CRASH_AT": "before-start:1"}


def _setup(tmp_path: Path, repo: Path) -> tuple[Path, Path]:
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    calls = tmp_path / "calls.txt"
    argv = [sys.executable, str(killer), str(calls), "{n}", str(tmp_path / "killed")]
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools: {{step: {{kind: exec, argv: {json.dumps(argv)}, idempotent: false}}, "
        "greet: {kind: echo}}\n"
    )
    (repo / "plans" / "two").mkdir(parents=True)
    (repo / "plans" / "two" / "PLAN.yml").write_text(PLAN)
    (repo / "plans" / "other").mkdir(parents=True)
    (repo / "plans" / "other" / "PLAN.yml").write_text(greet_plan("other", "say hi", "world"))
    commit_all(repo, "propose", ("Agent", "agent@example.com"))
    _run(config)
    _approve(repo, "two")
    # started (its start commit on the branch, the journal's begin), killed before action 1
    crashed = run_cli("run", "--once", "--config", str(config), env=BEFORE_ACTION_1, timeout=120)
    assert crashed.returncode != 0, crashed.stderr[-1500:]
    (tmp_path / "state" / "lock").unlink(missing_ok=True)
    assert not calls.exists()
    return config, calls


def _run(config: Path) -> str:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.stderr


def _approve(repo: Path, slug: str, status: str = "pending_approval") -> None:
    """Alice approves ``slug``: its status line, committed alone. (Not ``git add -A``: after
    the kill the working tree holds the controller's uncommitted record of the other plan,
    and committing its ``execution:`` block made her an owned-block editor of that plan,
    whose resume she could then no longer approve: docs/approvals.md, r72comment's rule.)"""
    path = repo / "plans" / slug / "PLAN.yml"
    path.write_text(path.read_text().replace(f"status: {status}", "status: approved", 1))
    git(repo, "add", str(path))
    git(repo, "commit", "-q", "-m", f"approve {slug}", env=identity("Alice", "alice@example.com"))


def _status(config: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    result = run_cli("status", "--json", "--config", str(config))
    assert result.returncode == 0, result.stderr
    return {row["plan"]: row for row in json.loads(result.stdout)}


def _doubt(row: dict) -> bool:  # type: ignore[type-arg]
    return row["status"] == "failed" and "E_ACTION_IN_DOUBT" in json.dumps(row)


def test_a_snapshot_older_than_the_branch_never_runs_an_action_again(
    tmp_path: Path, repo: Path
) -> None:
    """Round 72: the copy holds the run's journal saying no action began; after it the
    controller made a sealed commit (another plan's start) and called action 1, then was
    killed. Restored, the copy adopts that commit and so knows it is older than the branch:
    the run is in doubt (its journal set aside, kept), action 1 is not called again; her
    resume approval runs the plan once."""
    config, calls = _setup(tmp_path, repo)
    state, snapshot = tmp_path / "state", tmp_path / "snapshot"
    shutil.copytree(state, snapshot, symlinks=True)  # a consistent point-in-time copy
    _approve(repo, "other")
    killed = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert killed.returncode != 0, killed.stderr[-1500:]  # in action 1, after its call
    assert calls.read_text().split() == ["one"]
    shutil.rmtree(state)
    shutil.copytree(snapshot, state, symlinks=True)  # the copy restored
    (state / "lock").unlink(missing_ok=True)
    err = _run(config)
    assert calls.read_text().split() == ["one"], err[-2000:]  # never again
    assert "own_commits_restored" in err and "journal_older_than_branch" in err, err[-2000:]
    row = _status(config)["plans/two"]
    assert _doubt(row) and "older than the branch" in json.dumps(row), row
    assert not (state / "older-than-branch").exists()  # done once
    aside = list((state / "journal").glob("*/*.jsonl.older-than-branch-*"))
    assert any("two" in str(p) for p in aside), aside  # kept for the person who checks
    other = _status(config)["plans/other"]
    assert other["status"] in ("completed", "failed"), other
    _run(config)  # the verdict sticks: nothing runs on a later pass
    assert calls.read_text().split() == ["one"]
    # she checked what action 1 did, and approves a resume: the plan runs once
    _approve(repo, "two", status="failed")
    _run(config)
    row = _status(config)["plans/two"]
    assert row["status"] == "completed" and not row["waiting"], json.dumps(row)
    assert calls.read_text().split() == ["one", "one", "two"]
    _run(config)
    assert calls.read_text().split() == ["one", "one", "two"]
    completions = git(repo, "log", "--format=%H", "--grep=^plangate: complete plans/two")
    assert len(completions.split()) == 1


def test_a_state_not_older_than_the_branch_goes_on_from_its_journal(
    tmp_path: Path, repo: Path
) -> None:
    """The control: the same crash, restarted with its own state directory (nothing on the
    branch it lacks: nothing adopted). Its journal says no action began, and it is trusted:
    the run goes on from action 1, once, and completes; no journal is set aside."""
    config, calls = _setup(tmp_path, repo)
    (tmp_path / "killed").touch()  # the tool kills nobody this time
    err = _run(config)
    assert "own_commits_restored" not in err and "journal_older_than_branch" not in err, err
    row = _status(config)["plans/two"]
    assert row["status"] == "completed", row
    assert calls.read_text().split() == ["one", "two"]
    assert not list((tmp_path / "state" / "journal").glob("*/*.older-than-branch-*"))


def test_a_copy_restored_before_anything_was_committed_after_it_is_not_told(
    tmp_path: Path, repo: Path
) -> None:
    """The limit (docs/operations.md, Restore): a copy after which the controller committed
    nothing cannot be told from the live state. Its journal is trusted as a crash's is: the
    run goes on from what the journal shows (here nothing ran after the copy: once)."""
    config, calls = _setup(tmp_path, repo)
    state, copy = tmp_path / "state", tmp_path / "copy"
    shutil.copytree(state, copy, symlinks=True)
    shutil.rmtree(state)
    shutil.copytree(copy, state, symlinks=True)
    (tmp_path / "killed").touch()
    err = _run(config)
    assert "journal_older_than_branch" not in err, err[-2000:]
    assert _status(config)["plans/two"]["status"] == "completed"
    assert calls.read_text().split() == ["one", "two"]


def test_a_crash_after_the_record_keeps_the_note(tmp_path: Path, repo: Path) -> None:
    """The note is written before the adopted commits are recorded and removed only once
    the journals are aside: a restart killed in between (here: the record already made, the
    note left) still sets them aside, and the run is in doubt, action 1 not called again."""
    config, calls = _setup(tmp_path, repo)
    state, snapshot = tmp_path / "state", tmp_path / "snapshot"
    shutil.copytree(state, snapshot, symlinks=True)
    _approve(repo, "other")
    killed = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert killed.returncode != 0, killed.stderr[-1500:]
    shutil.rmtree(state)
    shutil.copytree(snapshot, state, symlinks=True)
    (state / "lock").unlink(missing_ok=True)
    # what the killed restart left: its record holds the sealed commits, the note is there
    made = git(repo, "log", "--reverse", "--author=plangate@localhost", "--format=%H").split()
    known = (state / "commits").read_text().split()
    with open(state / "commits", "a") as record:
        record.writelines(f"{sha}\n" for sha in made if sha not in known)
    (state / "older-than-branch").write_text('{"at": "a crash"}\n')
    err = _run(config)
    assert calls.read_text().split() == ["one"], err[-2000:]
    assert "own_commits_restored" not in err and "journal_older_than_branch" in err, err[-2000:]
    assert _doubt(_status(config)["plans/two"])
    assert not (state / "older-than-branch").exists()
