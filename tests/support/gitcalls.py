"""The git commands plangate spawns, counted by a ``git`` on ``PATH`` that notes each call's
subcommand and runs the real one.

git's own trace (``GIT_TRACE``) counted them before round 111; plangate now gives no git
child a ``GIT_TRACE*`` variable (a trace sent to stdout was read as git's answer), so the
count is taken in front of git instead.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

_WRAPPER = """#!/bin/sh
record=""
for arg in "$@"; do record="$record$arg$(printf '\\037')"; done
printf '%s\\036' "$record" >> "{log}"
exec "{git}" "$@"
"""
#: git's global options that take the next argument as their value.
_VALUED = {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path"}


def trace_git_calls(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put the counting ``git`` first on ``PATH`` (for this test); the log it writes."""
    real = shutil.which("git")
    assert real is not None, "no git on PATH"
    bin_dir = folder / "git-calls-bin"
    bin_dir.mkdir()
    log = folder / "git-calls"
    wrapper = bin_dir / "git"
    wrapper.write_text(_WRAPPER.format(log=log, git=real))
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def git_commands(log: Path) -> Counter[str]:
    """The subcommands the log holds, counted (``check-attr``, ``rev-parse``...)."""
    found: Counter[str] = Counter()
    text = log.read_text(errors="replace") if log.exists() else ""
    for record in filter(None, text.split("\x1e")):
        args = record.split("\x1f")
        at = 0
        while at < len(args) and args[at].startswith("-"):
            at += 2 if args[at] in _VALUED else 1
        if at < len(args) and args[at]:
            found[args[at]] += 1
    return found
