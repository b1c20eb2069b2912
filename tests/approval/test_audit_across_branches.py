"""``plangate audit`` reads the starts on the repository's other branches (SPEC §15: a version
runs at most once).

Two controllers with their own state directories, same identity, one on ``release`` (started
first, so its first start found nothing elsewhere) and one on ``main``: ``main`` runs the
version, then Alice approves the same version on ``release`` and that controller runs it
again. The audit of ``release`` read that branch alone and listed the second run as valid;
it now reads the starts under the controller's name on every other branch it holds
(``refs/heads/*``, ``refs/remotes/*``) and flags a later start of the same frozen hash
``started-twice``. The audit of ``main`` (whose run came first) stays clean, and an unsealed
start on another branch (anyone's) flags nothing.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from controller import settings
from controller.plan import yamlio
from controller.service.reconcile import Controller
from tests.support.gitenv import run_cli
from tests.support.gitkit import ALICE, approve, commit_all, git, head_plan, write_plan

CONTROLLER = {
    "GIT_AUTHOR_NAME": "plangate",
    "GIT_AUTHOR_EMAIL": "plangate@localhost",
    "GIT_COMMITTER_NAME": "plangate",
    "GIT_COMMITTER_EMAIL": "plangate@localhost",
}


def _pass(state: Path, repo: Path, times: int = 2) -> None:
    config = settings.config_from_data(
        {
            "repo": str(repo),
            "state_dir": str(state),
            "approval": {"approvers": ["alice@example.com"]},
            "tools": {"greet": {"kind": "echo"}},
        },
        repo.parent / "plangate.yml",
    )
    ctl = Controller(config)
    try:
        for _ in range(times):
            ctl.run_once()
    finally:
        ctl.close()


def _audit(clone: Path) -> tuple[int, dict[str, Any]]:
    result = run_cli("audit", "--json", cwd=clone)
    return result.returncode, json.loads(result.stdout)


def _clone(repo: Path, target: Path, branch: str) -> Path:
    subprocess.run(["git", "clone", "-q", "-b", branch, str(repo), str(target)], check=True)
    return target


def _two_runs(repo: Path, tmp_path: Path) -> None:
    write_plan(repo, "greet")
    commit_all(repo, "add greet")
    git(repo, "branch", "release")
    git(repo, "switch", "-q", "release")
    _pass(tmp_path / "on-release", repo, 1)  # its first start: nothing elsewhere yet
    git(repo, "switch", "-q", "main")
    _pass(tmp_path / "on-main", repo, 1)
    approve(repo, "greet")
    _pass(tmp_path / "on-main", repo)
    assert head_plan(repo, "greet")["plan"]["status"] == "completed"
    time.sleep(1.1)  # commit times are in seconds: the second run a second later at least
    git(repo, "switch", "-q", "release")
    approve(repo, "greet", ALICE)
    _pass(tmp_path / "on-release", repo)  # its own record knew nothing of main's run
    assert head_plan(repo, "greet")["plan"]["status"] == "completed"


def test_a_second_run_on_another_branch_is_flagged(repo: Path, tmp_path: Path) -> None:
    _two_runs(repo, tmp_path)
    code, report = _audit(_clone(repo, tmp_path / "clone-release", "release"))
    assert code == 1, report
    twice = [f for f in report["findings"] if f["kind"] == "started-twice"]
    assert [f["plan"] for f in twice] == ["plans/greet"], report["findings"]
    assert "another branch" in twice[0]["detail"]
    (run,) = [e for e in report["executions"] if e["plan"] == "plans/greet"]
    assert run["approval_valid"] is False and run["code"] == "E_ALREADY_EXECUTED"


def test_the_first_run_is_not_flagged(repo: Path, tmp_path: Path) -> None:
    _two_runs(repo, tmp_path)
    code, report = _audit(_clone(repo, tmp_path / "clone-main", "main"))
    assert code == 0, report["findings"]
    (run,) = [e for e in report["executions"] if e["plan"] == "plans/greet"]
    assert run["approval_valid"] is True


def test_a_single_branch_clone_reads_one_branch(repo: Path, tmp_path: Path) -> None:
    """What the clone does not hold is not read: a single-branch clone of ``release`` is
    clean (the auditor clones every branch to see across them: docs/approvals.md)."""
    _two_runs(repo, tmp_path)
    target = tmp_path / "single"
    subprocess.run(
        ["git", "clone", "-q", "--single-branch", "-b", "release", str(repo), str(target)],
        check=True,
    )
    code, report = _audit(target)
    assert code == 0, report["findings"]


def test_an_unsealed_start_on_another_branch_flags_nothing(repo: Path, tmp_path: Path) -> None:
    """A start under the controller's name without a seal (anyone can write that) on another
    branch is no run: the honest run on main is not flagged."""
    write_plan(repo, "greet")
    commit_all(repo, "add greet")
    _pass(tmp_path / "state", repo, 1)
    git(repo, "switch", "-q", "-c", "forged")
    approve(repo, "greet")
    path = repo / "plans" / "greet" / "PLAN.yml"
    doc = yamlio.read_yaml(path.read_text())
    path.write_text(yamlio.set_scalar(doc, ("plan", "status"), "executing"))
    git(repo, "add", "-A")
    plan_hash = head_plan(repo, "greet")["frozen"]["hash"]
    message = f"plangate: start plans/greet\n\nPlan: plans/greet\nPlan-Hash: {plan_hash}\n"
    git(repo, "commit", "-q", "-m", message, env=CONTROLLER)
    git(repo, "switch", "-q", "main")
    approve(repo, "greet")
    _pass(tmp_path / "state", repo)
    code, report = _audit(_clone(repo, tmp_path / "clone", "main"))
    assert code == 0, report["findings"]
