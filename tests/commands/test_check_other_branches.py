"""``plangate check`` and a version that ran on another branch (round 126, atk126d).

A controller with a new state directory learns, on its first start, the starts under its
name on the repository's other branches and refuses those versions ``E_ALREADY_EXECUTED``
(tests/service/test_once_across_branches.py); ``check`` reads the same starts on the
checking clone's branches and remote-tracking branches, so it predicts the refusal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.gitenv import commit_all, git, run_cli
from tests.support.gitkit import AGENT, ALICE, approve, edit_status, head_plan, write_plan

CONTROLLER = {
    "GIT_AUTHOR_NAME": "plangate",
    "GIT_AUTHOR_EMAIL": "plangate@localhost",
    "GIT_COMMITTER_NAME": "plangate",
    "GIT_COMMITTER_EMAIL": "plangate@localhost",
}


def _config(repo: Path, state: Path) -> Path:
    path = repo.parent / f"{state.name}.json"
    data = {
        "repo": str(repo),
        "state_dir": str(state),
        "approval": {"approvers": ["alice@example.com"]},
        "tools": {"greet": {"kind": "echo"}},
    }
    path.write_text(json.dumps(data))
    return path


def _run(repo: Path, config: Path, *options: str) -> None:
    result = run_cli("--config", str(config), "run", "--once", *options, cwd=repo)
    assert result.returncode == 0, result.stderr


def _frozen_then_released(repo: Path, config: Path) -> None:
    write_plan(repo, "greet")
    commit_all(repo, "add greet", AGENT)
    _run(repo, config)  # frozen on main
    git(repo, "branch", "release")


def _checked(repo: Path, config: Path) -> dict[str, Any]:
    """Alice's approval of ``greet`` on ``review`` (off ``release``), checked against it."""
    git(repo, "switch", "-q", "release")
    git(repo, "switch", "-q", "-c", "review")
    approve(repo, "greet", ALICE)
    result = run_cli(
        "--config", str(config), "check", "--base", "release", "--head", "review",
        "--as", "alice@example.com", "--format", "json", cwd=repo,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    [plan] = [p for p in json.loads(result.stdout)["plans"] if p["plan"] == "plans/greet"]
    return dict(plan)


def test_check_predicts_the_refusal_of_a_version_that_ran_on_another_branch(
    repo: Path, tmp_path: Path
) -> None:
    config = _config(repo, tmp_path / "state")
    _frozen_then_released(repo, config)
    approve(repo, "greet", ALICE)
    _run(repo, config)
    _run(repo, config)
    assert head_plan(repo, "greet")["plan"]["status"] == "completed"
    plan = _checked(repo, config)
    assert plan["outcome"] == "refuse", plan
    assert [r["code"] for r in plan["refused"]] == ["E_ALREADY_EXECUTED"], plan


def test_check_takes_no_unsealed_start_on_another_branch_for_a_run(
    repo: Path, tmp_path: Path
) -> None:
    """A start under the controller's name without a seal is anyone's (round 69): it refuses
    nothing, in check as in the controller."""
    config = _config(repo, tmp_path / "state")
    _frozen_then_released(repo, config)
    approve(repo, "greet", ALICE)
    edit_status(repo, "greet", "executing")
    plan_hash = head_plan(repo, "greet")["frozen"]["hash"]
    git(repo, "add", "-A")
    message = f"plangate: start plans/greet\n\nPlan: plans/greet\nPlan-Hash: {plan_hash}\n"
    git(repo, "commit", "-q", "-m", message, env=CONTROLLER)
    plan = _checked(repo, config)
    assert plan["outcome"] == "start", json.dumps(plan)
