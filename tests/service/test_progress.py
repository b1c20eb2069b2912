"""Long work shows progress: a line on a terminal, structured `progress` events otherwise."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from controller.git.history import PROGRESS_EVERY
from tests.support.gitenv import commit_all, git
from tests.support.gitkit import AGENT, ALICE, PLAN, approve, write_plan


def _repo_with_history(repo: Path, tmp_path: Path) -> Path:
    """Many commits under plans/ (a cold scan's work) and two approved plans to run."""
    script = []
    for n in range(PROGRESS_EVERY + 10):  # one commit per change, through fast-import
        data = f"note {n}\n"
        start = "from refs/heads/main^0\n" if n == 0 else ""
        script.append(
            f"commit refs/heads/main\ncommitter A <a@example.com> {1700000000 + n} +0000\n"
            f"data 4\nbulk\n{start}"
            f"M 100644 inline plans/notes/n.txt\ndata {len(data)}\n{data}\n"
        )
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=repo, input="".join(script), text=True, check=True
    )
    git(repo, "reset", "-q", "--hard", "main")
    for slug in ("one", "two"):  # distinct plans: one frozen hash runs once per controller
        write_plan(repo, slug, PLAN.replace('name: "Greet"', f'name: "Greet {slug}"', 1))
    commit_all(repo, "agent", AGENT)
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    return config


def _run_once(config: Path, tty: bool) -> str:
    command = [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)]
    if not tty:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return done.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=120) == 0
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


def test_progress_events_when_not_a_terminal(repo: Path, tmp_path: Path) -> None:
    config = _repo_with_history(repo, tmp_path)
    _run_once(config, tty=False)  # freezes both
    approve(repo, "one", ALICE)
    approve(repo, "two", ALICE)
    _cold_start(tmp_path)
    events = [
        json.loads(line)
        for line in _run_once(config, tty=False).splitlines()
        if line.startswith("{") and '"progress"' in line
    ]
    tasks = {e["task"] for e in events if e["event"] == "progress"}
    assert "indexing history (commits)" in tasks and "running approved plans" in tasks
    last = [e for e in events if e["task"] == "running approved plans"][-1]
    assert last["done"] == last["total"] == 2


def _cold_start(tmp_path: Path) -> None:
    """A new state directory (history read again) with the old key put back first: its own
    sealed history, adopted without ``--take-over`` (round 70)."""
    (tmp_path / "state").rename(tmp_path / "old-state")
    (tmp_path / "state").mkdir()
    (tmp_path / "old-state" / "commit.key").rename(tmp_path / "state" / "commit.key")


def test_progress_line_on_a_terminal(repo: Path, tmp_path: Path) -> None:
    config = _repo_with_history(repo, tmp_path)
    _run_once(config, tty=False)
    approve(repo, "one", ALICE)
    approve(repo, "two", ALICE)
    _cold_start(tmp_path)
    out = _run_once(config, tty=True)
    assert "\rindexing history (commits): " in out or "\r\x1b[Kindexing history" in out
    assert "running approved plans: 2/2" in out
