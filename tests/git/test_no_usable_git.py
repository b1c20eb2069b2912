"""No usable git: every command says ``E_GIT`` with a remedy (round 110, atk110b).

GitPython runs ``git version`` when it is imported and raised ``ImportError``: ``status``,
``approve``, ``audit`` and ``check`` answered "internal error: ImportError: Bad git
executable" (or "Failed to initialize" for a git that answers with an error), and the MCP
server died before it answered. Real processes (not the test suite's pre-imported fork
server, where GitPython is already loaded), a PATH without git or with a git that fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bin(tmp_path: Path, git: str | None) -> str:
    """A PATH folder with ``sh`` and, when given, a ``git`` script of that body."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("sh", "env"):
        found = shutil.which(tool)
        assert found
        (folder / tool).symlink_to(found)
    if git is not None:
        (folder / "git").write_text(f"#!/bin/sh\n{git}")
        (folder / "git").chmod(0o755)
    return str(folder)


@pytest.mark.parametrize(
    ("git", "said"),
    [
        (None, "no git executable found on PATH"),
        ("echo 'fatal: broken git' >&2\nexit 128\n", "`git version` exited 128: fatal: broken git"),
    ],
    ids=["missing", "failing"],
)
@pytest.mark.parametrize("command", [["status"], ["audit", "--json"], ["approve", "plans/x"]])
def test_a_command_without_a_usable_git_says_e_git(
    tmp_path: Path, git: str | None, said: str, command: list[str]
) -> None:
    env = {**os.environ, "PATH": _bin(tmp_path, git), "PYTHONPATH": str(ROOT)}
    env.pop("GIT_PYTHON_REFRESH", None)
    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {tmp_path}\napproval: {{approvers: [a@example.com]}}\n")
    result = subprocess.run(
        [sys.executable, "-m", "controller", *command, "--config", str(config)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert "E_GIT" in out and said in out and "install git" in out, out
    assert "internal error" not in out and "Traceback" not in out, out
