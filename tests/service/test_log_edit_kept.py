"""A person's change of a run's EXECUTION_LOG.md is kept where they left it (round 122,
atk122d ``log-edit-overwritten``).

The break: the controller SIGKILLed in an action; before the restart a person writes a line
into the plan's EXECUTION_LOG.md (untracked: the start writes no log), and may ``git add``
it. The restart fails the run E_ACTION_IN_DOUBT and its outcome's checkout wrote the
engine's log over the file, and its index write over the staged entry: the person's line was
gone. Now the outcome commits the engine's log as ever (never the person's bytes; nothing
waits: an agent may rewrite the log at any moment) and leaves the person's working-tree file
and staged entry as they are (``Committing._kept_by_person``): ``git diff`` / ``git diff
--cached`` show their change against the controller's committed log.

Real git, real ``plangate run --once`` subprocesses, a real exec tool that SIGKILLs its
parent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.test_run_record_after_rewrite_or_crash import _Lab
from tests.support.gitenv import git

LINE = "person log edit"


@pytest.mark.parametrize("staged", [False, True])
def test_a_persons_log_edit_after_a_kill_is_kept(tmp_path: Path, repo: Path, staged: bool) -> None:
    lab = _Lab(tmp_path, repo, "lk", "kill")
    killed = lab.cli("run", "--once")
    assert killed.returncode < 0, killed.stderr[-2000:]  # SIGKILLed mid action 1
    rel = "plans/lk/EXECUTION_LOG.md"
    log = repo / rel
    assert not log.exists()  # the start wrote no log
    log.write_text(f"{LINE}\n")
    if staged:
        git(repo, "add", rel)

    again = lab.cli("run", "--once")
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr[-2000:]

    assert lab.calls() == ["lk-1"]  # in doubt: never run again unasked
    assert git(repo, "log", "-1", "--format=%s").startswith("plangate: fail plans/lk")
    committed = lab.committed("EXECUTION_LOG.md")
    assert "E_ACTION_IN_DOUBT" in committed and LINE not in committed, committed
    assert log.read_text() == f"{LINE}\n"  # the person's file, as they left it
    cached = git(repo, "diff", "--cached", "--", rel)
    if staged:
        assert f"+{LINE}" in cached, cached  # their staged entry, kept
    else:
        assert cached == ""  # the index names the committed log: nothing staged of theirs
        assert f"+{LINE}" in git(repo, "diff", "--", rel)  # their edit, unstaged
    assert lab.cli("run", "--once").returncode == 0
    assert log.read_text() == f"{LINE}\n"  # a later pass writes nothing over it either
