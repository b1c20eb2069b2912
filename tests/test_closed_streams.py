"""A caller that closed a standard descriptor (``>&-``): the command runs and says what it
can, never a traceback (round 110, atk110b: ``approve ... >&-`` committed, then stopped with
``AttributeError: 'NoneType' object has no attribute 'flush'`` and exit 1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _sh(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PG": f"{sys.executable} -m controller"}
    return subprocess.run(
        ["sh", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_closed_stdout_keeps_the_exit_status_and_says_the_answer_was_not_shown(
    tmp_path: Path,
) -> None:
    result = _sh("$PG schema >&-", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "standard output is closed (exit status 0" in result.stderr


def test_a_closed_stderr_sends_errors_with_the_answer(tmp_path: Path) -> None:
    result = _sh("$PG status --config missing.yml 2>&-", tmp_path)
    assert result.returncode == 2
    assert "E_CONFIG_INVALID" in result.stdout and "remedy" in result.stdout, result.stdout


def test_a_closed_stdin_is_no_error(tmp_path: Path) -> None:
    result = _sh("$PG validate nothing.yml <&-", tmp_path)
    assert "Traceback" not in result.stderr + result.stdout
    assert "E_" in result.stderr, result.stderr
