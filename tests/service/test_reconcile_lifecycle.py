"""Gates, resumes and aborts: the other human transitions of SPEC §4, end to end."""

from __future__ import annotations

from pathlib import Path

from controller import settings
from controller.service.reconcile import Controller
from tests.support.gitenv import identity, run_cli
from tests.support.gitkit import (
    ALICE,
    BOB,
    GATED,
    PLAN,
    approve,
    commit_all,
    head_plan,
    subjects,
    write_plan,
)


def _config(repo: Path, tools: dict[str, object] | None = None) -> settings.Config:
    data = {
        "repo": str(repo),
        "approval": {"approvers": ["alice@example.com", "*@ops.example.com"]},
        "tools": tools or {"greet": {"kind": "echo"}},
    }
    return settings.config_from_data(data, repo.parent / "plangate.yml")


def _once(repo: Path, tools: dict[str, object] | None = None) -> None:
    ctl = Controller(_config(repo, tools))
    try:
        ctl.run_once()
    finally:
        ctl.close()


def _approved_and_failed(repo: Path, tools: dict[str, object]) -> None:
    """An agent's plan, frozen, approved by Alice and run with ``tools``: it failed."""
    write_plan(repo, text=PLAN)
    commit_all(repo, "add", ("Agent", "agent@example.com"))
    _once(repo, tools)
    approve(repo, who=ALICE)
    _once(repo, tools)
    assert head_plan(repo)["plan"]["status"] == "failed"
    assert subjects(repo)[0] == "plangate: fail plans/greet"


def test_gate_pauses_then_a_second_approval_continues(repo: Path) -> None:
    write_plan(repo, text=GATED)
    commit_all(repo, "add", ("Agent", "agent@example.com"))
    _once(repo)
    approve(repo, who=ALICE)
    _once(repo)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "awaiting_approval"
    assert subjects(repo)[0] == "plangate: await-approval plans/greet"
    assert [a["status"] for a in plan["execution"]["actions"]] == ["succeeded", "pending"]
    approve(repo, who=BOB)
    _once(repo)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed"
    assert [a["status"] for a in plan["execution"]["actions"]] == ["succeeded", "succeeded"]


def test_abort_of_a_paused_plan_is_recorded(repo: Path) -> None:
    write_plan(repo, text=GATED)
    commit_all(repo, "add", ("Agent", "agent@example.com"))
    _once(repo)
    approve(repo, who=ALICE)
    _once(repo)
    result = run_cli("abort", "plans/greet", cwd=repo, env=identity(*ALICE))
    assert result.returncode == 0, result.stderr
    _once(repo)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "aborted"
    assert plan["execution"]["status"] == "aborted"
    assert subjects(repo)[0] == "plangate: abort plans/greet"


def test_failed_plan_resumes_after_a_new_approval(repo: Path, tmp_path: Path) -> None:
    flag = tmp_path / "ready"
    tools = {"greet": {"kind": "exec", "argv": ["sh", "-c", f"test -f {flag} && echo '{{}}'"]}}
    _approved_and_failed(repo, tools)
    flag.write_text("")
    approve(repo, who=BOB)
    _once(repo, tools)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed"
    assert plan["approval"]["resume"] is True


def test_human_commands_refuse_wrong_states(repo: Path) -> None:
    write_plan(repo)
    commit_all(repo, "add", ("Agent", "agent@example.com"))
    result = run_cli("approve", "plans/greet", cwd=repo)
    assert result.returncode != 0 and "E_PLAN_NOT_FROZEN" in result.stderr
    result = run_cli("abort", "plans/greet", cwd=repo)
    assert result.returncode == 1 and "E_ILLEGAL_TRANSITION" in result.stderr
    result = run_cli("reject", "plans/greet", "-m", "not needed", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert head_plan(repo)["plan"]["status"] == "rejected"
    from tests.support.gitenv import git

    assert "not needed" in git(repo, "log", "-1", "--format=%B")


def test_a_tool_error_with_a_nul_byte_is_committed_as_git_would(repo: Path) -> None:
    """The fail commit carries the tool's last stderr line; a NUL in it must not reach the
    commit object (git refuses one: `git log` stops reading at it, so the trailers vanish,
    and `fsck --strict`, as receive.fsckObjects runs it, rejects the commit)."""
    from tests.support.gitenv import git
    from tests.support.gitkit import trailers

    tools = {"greet": {"kind": "exec", "argv": ["sh", "-c", r"printf 'bad\0byte\n' >&2; exit 3"]}}
    _approved_and_failed(repo, tools)
    assert b"\0" not in git(repo, "cat-file", "commit", "HEAD").encode()
    assert "bad\\x00byte" in git(repo, "log", "-1", "--format=%b")
    assert trailers(repo)["Plan"] == "plans/greet"
    assert trailers(repo)["Plan-Status"] == "failed"
    assert git(repo, "fsck", "--strict", "--no-dangling", "--no-progress") == ""
