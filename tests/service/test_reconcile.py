"""The controller against real git repos: every approval rule of SPEC §5 end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.errors import GitError
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    MALLORY,
    PLAN,
    approve,
    commit_all,
    controller,
    edit_status,
    git,
    head_plan,
    run_once,
    subjects,
    submitted,
    trailers,
    write_plan,
)


def test_direct_approval_runs_and_commits_back(repo: Path) -> None:
    submitted(repo)
    approval_commit = approve(repo)
    run_once(repo)
    assert subjects(repo)[:2] == ["plangate: complete plans/greet", "plangate: start plans/greet"]
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed"
    assert plan["approval"]["by"] == "alice@example.com"
    assert plan["approval"]["commit"] == approval_commit
    assert plan["execution"]["actions"][0]["status"] == "succeeded"
    found = trailers(repo)
    assert found["Plan"] == "plans/greet" and found["Plan-Status"] == "completed"
    assert found["Approved-By"] == "alice@example.com"
    assert found["Approval-Commit"] == approval_commit
    assert git(repo, "log", "-1", "--format=%an <%ae>") == "controller <plangate@localhost>\n"
    assert "EXECUTION_LOG.md" in git(repo, "show", "--stat", "--format=", "HEAD")
    text = (repo / "plans/greet/PLAN.yml").read_text()
    assert "# Written by the agent" in text and "# trailing comment" in text
    assert git(repo, "status", "--porcelain") == ""


def _refusal(repo: Path) -> dict[str, Any]:
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "pending_approval"
    assert subjects(repo)[0] == "plangate: refuse plans/greet"
    assert plan["approval"]["status"] == "refused"
    return dict(plan["approval"])


def test_self_approval_is_refused(repo: Path) -> None:
    submitted(repo, who=ALICE)
    approve(repo, who=ALICE)
    run_once(repo)
    assert _refusal(repo)["code"] == "E_SELF_APPROVAL"


def test_self_approval_allowed_by_config(repo: Path) -> None:
    submitted(repo, who=ALICE)
    approve(repo, who=ALICE)
    run_once(repo, allow_self_approval=True)
    assert head_plan(repo)["plan"]["status"] == "completed"


def test_unlisted_approver_is_refused(repo: Path) -> None:
    submitted(repo)
    approve(repo, who=MALLORY)
    run_once(repo)
    refusal = _refusal(repo)
    assert refusal["code"] == "E_APPROVER_NOT_ALLOWED"
    assert refusal["by"] == "mallory@example.com"


def test_empty_approver_list_allows_nobody(repo: Path) -> None:
    submitted(repo, approvers=[])
    approve(repo)
    run_once(repo, approvers=[])
    assert _refusal(repo)["code"] == "E_APPROVER_NOT_ALLOWED"


def test_approving_commit_that_changes_a_param_is_refused(repo: Path) -> None:
    submitted(repo)
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text().replace("who: world", "who: everyone"))
    approve(repo)
    run_once(repo)
    assert _refusal(repo)["code"] == "E_PLAN_HASH_MISMATCH"


def test_edit_after_approval_before_the_controller_acted_is_refused(repo: Path) -> None:
    submitted(repo)
    approve(repo)
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text().replace("who: world", "who: everyone"))
    commit_all(repo, "tweak", BOB)
    run_once(repo)
    assert _refusal(repo)["code"] == "E_PLAN_HASH_MISMATCH"
    assert "execution" not in head_plan(repo)


def test_refused_plan_needs_a_new_approval(repo: Path) -> None:
    submitted(repo)
    approve(repo, who=MALLORY)
    run_once(repo)
    approve(repo, who=BOB)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"
    assert head_plan(repo)["approval"]["by"] == "bob@ops.example.com"


def _agent_branch(repo: Path) -> None:
    """An agent's branch adding a frozen plan already marked approved (a pull request)."""
    git(repo, "switch", "-q", "-c", "agent/greet")
    write_plan(repo)
    commit_all(repo, "add plan", AGENT)
    from controller.plan import plans

    loaded = plans.load_plan(repo / "plans/greet/PLAN.yml")
    (repo / "plans/greet/PLAN.yml").write_text(plans.freeze_text(loaded).text)
    edit_status(repo, "greet", "approved")
    commit_all(repo, "freeze and ask for approval", AGENT)
    git(repo, "switch", "-q", "main")
    (repo / "other.txt").write_text("main moved on\n")
    commit_all(repo, "unrelated", BOB)


def _merge(repo: Path, who: tuple[str, str]) -> None:
    env = {
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": who[0],
        "GIT_COMMITTER_EMAIL": who[1],
    }
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge agent/greet", "agent/greet", env=env)


def test_no_ff_merge_by_an_approver_executes(repo: Path) -> None:
    _agent_branch(repo)
    _merge(repo, ALICE)
    run_once(repo)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed"
    merge = git(repo, "log", "--merges", "--format=%H", "-1").strip()
    assert merge and plan["approval"]["commit"] == merge


def test_no_ff_merge_by_the_agent_is_refused(repo: Path) -> None:
    _agent_branch(repo)
    _merge(repo, AGENT)
    run_once(repo, approvers=["*@example.com"])
    assert _refusal(repo)["code"] == "E_SELF_APPROVAL"


def test_squash_merge_that_adds_an_approved_plan_is_self_approval(repo: Path) -> None:
    _agent_branch(repo)
    git(repo, "merge", "-q", "--squash", "agent/greet")
    commit_all(repo, "Squashed agent/greet", ALICE)
    run_once(repo)
    assert _refusal(repo)["code"] == "E_SELF_APPROVAL"


def test_squash_merged_plan_approved_separately_executes(repo: Path) -> None:
    _agent_branch(repo)
    git(repo, "merge", "-q", "--squash", "agent/greet")
    edit_status(repo, "greet", "pending_approval")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Squashed", "--author", "Agent <agent@example.com>")
    run_once(repo)
    approve(repo, who=ALICE)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"


def test_illegal_transition_is_ignored_and_reported(repo: Path) -> None:
    submitted(repo)
    edit_status(repo, "greet", "completed")
    commit_all(repo, "pretend it ran", AGENT)
    with controller(repo) as ctl:
        assert ctl.run_once() == 0
        row = ctl.status()[0]
    assert row["status"] == "pending_approval" and row["file_status"] == "completed"
    assert "E_ILLEGAL_TRANSITION" in row["last_event"]
    assert subjects(repo)[0] == "pretend it ran"


def test_plan_appearing_as_executing_never_runs(repo: Path) -> None:
    write_plan(repo, text=PLAN.replace("pending_approval", "executing"))
    commit_all(repo, "sneaky", AGENT)
    run_once(repo)
    assert subjects(repo)[0] == "sneaky"


def test_uncommitted_human_edit_makes_the_controller_wait(repo: Path) -> None:
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    path = repo / "plans/greet/PLAN.yml"
    edited = path.read_text() + "# still thinking\n"
    path.write_text(edited)
    with controller(repo) as ctl:
        ctl.run_once()
        assert "uncommitted" in (ctl.status()[0]["waiting"] or "")
    assert path.read_text() == edited
    assert subjects(repo)[0] == "add"
    commit_all(repo, "done thinking", AGENT)
    run_once(repo)
    assert subjects(repo)[0] == "plangate: freeze plans/greet"


def test_untracked_plan_is_adopted_and_nothing_else_committed(repo: Path) -> None:
    write_plan(repo)
    (repo / "notes.txt").write_text("human's unrelated work\n")
    (repo / "README").write_text("edited but not committed\n")
    git(repo, "add", "README")
    run_once(repo)
    assert subjects(repo)[0] == "plangate: freeze plans/greet"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["plans/greet/PLAN.yml"]
    assert git(repo, "status", "--porcelain").splitlines() == ["M  README", "?? notes.txt"]


def test_invalid_plan_is_marked_with_its_errors(repo: Path) -> None:
    write_plan(repo, text=PLAN.replace("tool: greet", "tool: nosuch"))
    commit_all(repo, "add", AGENT)
    run_once(repo)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "invalid"
    codes = {e["code"] for e in plan["validation"]["errors"]}
    assert "E_TOOL_NOT_DECLARED" in codes
    assert subjects(repo)[0] == "plangate: invalid plans/greet"


def test_concurrent_human_work_is_kept(repo: Path) -> None:
    submitted(repo)
    approve(repo)
    with controller(repo) as ctl:
        jobs = ctl.reconcile()
        (repo / "other.txt").write_text("committed meanwhile\n")
        commit_all(repo, "human work", BOB)
        (repo / "README").write_text("staged\n")
        git(repo, "add", "README")
        (repo / "scratch.txt").write_text("untracked\n")
        ctl.execute(jobs[0])
    assert subjects(repo)[:3] == [
        "plangate: complete plans/greet",
        "human work",
        "plangate: start plans/greet",
    ]
    assert git(repo, "status", "--porcelain").splitlines() == ["M  README", "?? scratch.txt"]
    assert git(repo, "rev-list", "--merges", "HEAD") == ""


def test_stale_index_lock_is_a_clear_git_error(repo: Path) -> None:
    submitted(repo)
    (repo / ".git/index.lock").write_text("")
    with controller(repo) as ctl, pytest.raises(GitError, match=r"index\.lock"):
        ctl.reconcile()


def test_detached_head_and_merge_in_progress_are_git_errors(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    with controller(repo) as ctl, pytest.raises(GitError, match="detached"):
        ctl.reconcile()
    git(repo, "switch", "-q", "main")
    (repo / ".git/MERGE_HEAD").write_text(git(repo, "rev-parse", "HEAD"))
    with controller(repo) as ctl, pytest.raises(GitError, match="middle of a merge"):
        ctl.reconcile()


def test_every_status_row_field_is_the_authors_or_the_controllers(repo: Path) -> None:
    """Round 63: MCP ``status`` kept a hand-made list of a row's author fields, and
    ``file_status`` and an unreadable plan's ``problem`` were not on it (redacted, a status
    or key equal to a secret confirmed a guess). The row builder classifies every field; a
    field it adds without saying whose it is fails here."""
    from controller.service.reconcile import AUTHOR_FIELDS, CONTROLLER_FIELDS, author_text

    submitted(repo)
    edit_status(repo, "greet", "completed")
    write_plan(repo, "dup", PLAN.replace("  task:", "  twice: 1\n  twice: 2\n  task:"))
    commit_all(repo, "a status after the fact, a key twice", AGENT)
    with controller(repo) as ctl:
        ctl.run_once()
        rows = {row["plan"]: row for row in ctl.status(reasons=True)}
    for row in rows.values():
        assert set(row) <= AUTHOR_FIELDS | CONTROLLER_FIELDS, set(row) - AUTHOR_FIELDS
    greet, dup = author_text(rows["plans/greet"]), author_text(rows["plans/dup"])
    assert greet["file_status"] == ("completed",) and "hash" not in greet
    problem = rows["plans/dup"]["problem"]
    assert "twice" in problem["message"] and dup["problem"]["message"] == (problem["message"],)
    assert dup["reason"] == (rows["plans/dup"]["reason"],)


def test_an_outcome_after_only_its_own_commits_reads_no_history_and_keeps_the_record(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: the record of a plan the controller started, with only its own commits since,
    is its own last commit of the file: the outcome reads no `git log` of the path, and still
    writes the record's blocks."""
    from controller.git import ownrecord

    read: list[str] = []
    life_of = ownrecord.life_of

    def counting(git: Any, rev: str, plan_file: str, *args: Any, **kwargs: Any) -> Any:
        read.append(plan_file)
        return life_of(git, rev, plan_file, *args, **kwargs)

    monkeypatch.setattr(ownrecord, "life_of", counting)
    submitted(repo)
    approve(repo)
    run_once(repo)  # the start, the run, the outcome: only the controller's commits since
    assert head_plan(repo)["plan"]["status"] == "completed"
    assert head_plan(repo)["approval"]["by"] == ALICE[1]
    assert head_plan(repo)["execution"]["status"] == "completed"
    assert read == []
