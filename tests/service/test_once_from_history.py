"""At most once, from git history (SPEC §15; round 50, issue 11).

A frozen hash that started on the branch never starts again, whatever the state directory
holds: the history index learns each hash's first start from the start commits under the
controller's name as it applies them (a cold start with a new state directory, a rebuilt
index, its own new commits), and the controller refuses a copy ``E_ALREADY_EXECUTED``, as
``plangate check`` predicts. Round 50: a controller with a new state directory (a rebuilt
host) ran an approved copy of a version whose start commit was on the branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller import settings
from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.service.reconcile import Controller
from tests.support.gitkit import (
    ALICE,
    PLAN,
    approve,
    commit_all,
    edit_status,
    git,
    head_plan,
    write_plan,
)


def _config(repo: Path, state: Path) -> settings.Config:
    data: dict[str, Any] = {
        "repo": str(repo),
        "state_dir": str(state),
        "approval": {"approvers": ["alice@example.com"]},
        "tools": {"greet": {"kind": "echo"}},
    }
    return settings.config_from_data(data, repo.parent / "plangate.yml")


def _pass(repo: Path, state: Path, times: int = 2, take_over: bool = False) -> None:
    ctl = Controller(_config(repo, state), take_over=take_over)
    try:
        for _ in range(times):
            ctl.run_once()
    finally:
        ctl.close()


def _ran_once(repo: Path, state: Path) -> None:
    """``plans/greet`` written by the agent, approved by Alice, run to completion."""
    write_plan(repo, "greet")
    commit_all(repo, "add greet")
    _pass(repo, state, 1)
    approve(repo, "greet")
    _pass(repo, state)
    assert head_plan(repo, "greet")["plan"]["status"] == "completed"


def _copy_approved(repo: Path, state: Path, take_over: bool = False) -> dict[str, Any]:
    """The same version in ``plans/copy``, frozen and approved by Alice, then two passes of
    the controller with ``state`` (``take_over``: a new one, told so, round 70): the copy's
    plan at HEAD."""
    write_plan(repo, "copy", PLAN)
    commit_all(repo, "the same plan again")
    _pass(repo, state, 1, take_over)
    assert head_plan(repo, "copy")["frozen"]["hash"] == head_plan(repo, "greet")["frozen"]["hash"]
    approve(repo, "copy", ALICE)
    _pass(repo, state)
    return head_plan(repo, "copy")


def _refused(plan: dict[str, Any]) -> None:
    assert plan["plan"]["status"] == "pending_approval", plan["plan"]
    assert "execution" not in plan or not plan["execution"], plan.get("execution")
    approval = plan.get("approval") or {}
    assert approval.get("status") == "refused", approval
    assert "E_ALREADY_EXECUTED" in str(approval), approval


def test_a_new_state_directory_refuses_a_copy_of_a_version_that_ran(
    repo: Path, tmp_path: Path
) -> None:
    _ran_once(repo, tmp_path / "state1")
    # a rebuilt host: the same repository, a new state directory (no executed.jsonl)
    plan = _copy_approved(repo, tmp_path / "state2", take_over=True)
    _refused(plan)
    assert (
        not (tmp_path / "state2" / "executed.jsonl").exists()
        or "copy" not in (tmp_path / "state2" / "executed.jsonl").read_text()
    )


def test_a_rebuilt_index_without_executed_jsonl_refuses_the_copy(
    repo: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    _ran_once(repo, state)
    for name in ("executed.jsonl", "index.sqlite", "memory.sqlite"):
        for path in state.glob(f"{name}*"):
            path.unlink()
    _refused(_copy_approved(repo, state))


def test_a_start_under_the_controller_name_it_did_not_make_counts(
    repo: Path, tmp_path: Path
) -> None:
    """Fails closed: a start commit under the controller's name that the controller did not
    make (by its record), of a plan an approval had reached, still says the version ran;
    refusing it (and a copy of it) is safe. (One with no approval before it is an illegal
    transition, ignored: round 2's ``batched-forged-executing`` runs once when approved.)"""
    state = tmp_path / "state"
    write_plan(repo, "greet")
    commit_all(repo, "add greet")
    _pass(repo, state, 1)  # adopts the history, freezes the plan
    approve(repo, "greet")
    edit_status(repo, "greet", "executing")
    git(repo, "add", "-A")
    controller_identity = {
        "GIT_AUTHOR_NAME": "plangate",
        "GIT_AUTHOR_EMAIL": "plangate@localhost",
        "GIT_COMMITTER_NAME": "plangate",
        "GIT_COMMITTER_EMAIL": "plangate@localhost",
    }
    message = "plangate: start plans/greet\n\nPlan: plans/greet\n"
    git(repo, "commit", "-q", "-m", message, env=controller_identity)
    _refused(_copy_approved(repo, state))


def test_the_index_learns_each_first_start_on_a_cold_scan_and_keeps_it(
    repo: Path, tmp_path: Path
) -> None:
    """The one record controller, check and audit read (``HistoryIndex.ran_as``): every
    start commit applied, on a cold scan and after, kept in memory.sqlite."""
    state = tmp_path / "state"
    _ran_once(repo, state)
    plan_hash = head_plan(repo, "greet")["frozen"]["hash"]
    gitrepo = GitRepo.containing(repo)
    try:
        head = gitrepo.rev("HEAD")
        assert head is not None
        index = HistoryIndex(None, plans_dir="plans", controller_email="plangate@localhost")
        index.scan(gitrepo, head)  # cold: no sink
        ran = index.ran_as(plan_hash)
        assert ran is not None and ran.startswith("plans/greet (start "), ran
        assert index.ran_as("sha256:" + "0" * 64) is None
        index.close()
        kept = HistoryIndex(
            tmp_path / "index.sqlite", plans_dir="plans", controller_email="plangate@localhost"
        )
        kept.scan(gitrepo, head)
        kept.close()
        (tmp_path / "index.sqlite").unlink()  # the cache; memory.sqlite keeps the starts
        again = HistoryIndex(
            tmp_path / "index.sqlite", plans_dir="plans", controller_email="plangate@localhost"
        )
        assert again.ran_as(plan_hash) == ran
        again.close()
    finally:
        gitrepo.close()
