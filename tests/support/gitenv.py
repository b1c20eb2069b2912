"""Running real git and the real CLI with pinned identities.

Every commit a test or a benchmark makes says who made it (``identity``): nothing depends on
the developer's git config, and the controller's own identity is told apart from humans'.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

AGENT = ("Agent", "agent@example.com")
ALICE = ("Alice", "alice@example.com")
BOB = ("Bob", "bob@ops.example.com")
MALLORY = ("Mallory", "mallory@example.com")
BOT = ("plangate", "plangate@localhost")


def identity(name: str, email: str) -> dict[str, str]:
    """Environment that makes git author and commit as ``name <email>``."""
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def git(
    repo: Path,
    *args: str,
    env: dict[str, str] | None = None,
    check: bool = True,
    data: bytes | None = None,
) -> str:
    """Run real git in ``repo`` (``data`` on its stdin, e.g. a fast-import stream); return
    stdout as text."""
    result = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **(env or {})},
        input=data,
        capture_output=True,
        check=False,
    )
    if check and result.returncode != 0:
        stderr = result.stderr.decode("utf-8", "replace")
        raise AssertionError(f"git {' '.join(args)} failed: {stderr}")
    # As text mode reads it: UTF-8, universal newlines.
    return result.stdout.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def remove_stale_index_lock(repo: Path) -> bool:
    """What git tells a person whose command meets ``.git/index.lock`` while no git process
    runs: remove it. A controller SIGKILLed between moving the branch and pointing the index
    at its commit leaves it (it holds the lock across both, as `git commit` does); its
    restart removes it itself (recover_index). True when there was one."""
    lock = repo / ".git" / "index.lock"
    if not lock.exists():
        return False
    lock.unlink()
    return True


def commit_all(repo: Path, message: str, who: tuple[str, str] = AGENT) -> str:
    """Stage everything and commit as ``who``; return the commit id."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, env=identity(*who))
    return git(repo, "rev-parse", "HEAD").strip()


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """The real ``plangate`` command in a process of its own (forked from a pre-imported
    server: :mod:`tests.support.clifork`)."""
    from tests.support import clifork

    return clifork.run(
        list(args),
        cwd=cwd or os.getcwd(),
        env={**os.environ, **(env or {})},
        input=input,
        timeout=timeout,
    )


def event_subjects(repo: Path, ref: str = "HEAD") -> list[str]:
    """Every commit's subject, newest first; a batched controller commit (several plans'
    events, docs/formats.md) counts as one ``plangate: <event> <plan>`` line per plan, as a
    commit of its own would have read."""
    from controller.git.records import batch_groups

    out = git(repo, "log", "--format=%s%x00%B%x01", ref)
    found: list[str] = []
    for row in out.split("\x01"):
        subject, _, body = row.strip("\n").partition("\0")
        if not subject:
            continue
        groups = batch_groups(body) if "\nPlan-Event: " in body else []
        found += [f"plangate: {t['Plan-Event']} {t['Plan']}" for _, t in groups] or [subject]
    return found
