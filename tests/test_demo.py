"""`make demo`: the newcomer's unattended tour must work end to end on a fresh checkout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.gitenv import ROOT


def test_make_demo_runs_the_whole_loop(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py"), "demo"],
        env={**os.environ, "PLANGATE_DEMO_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "plan.status is now completed" in out
    assert "Approved-By: alice@example.com" in out
    assert "plangate: freeze plans/process-emails" in out
    assert "# Execution log: Process customer emails" in out
    outbox = (tmp_path / "unattended/mailbox/outbox.jsonl").read_text()
    assert "billing_response" in outbox
    # Act two: the hostile sender is stopped by the plan's guard and nothing reaches it.
    assert "6. the guard stops the reply" in out and "emails sent to it: 0" in out
    assert "evil.example" not in outbox and len(outbox.splitlines()) == 1
