"""Batched controller commits (several plans' events in one commit, docs/formats.md): the
audit, ``status`` and ``git log`` read each plan's own trailer group, and a forged batch is
caught plan by plan."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from controller.settings.models import default_state_dir
from tests.support.gitenv import event_subjects, run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    commit_all,
    controller,
    edit_status,
    git,
    run_once,
    write_plan,
)
from tests.support.plantext import greet_plan


@pytest.fixture(autouse=True)
def unhurried_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches close at the end of the pass, not after 0.2 s: on a loaded machine a pass
    deciding one plan per 0.2 s would commit each alone, and these tests are about reading
    batched commits, not about when a batch closes."""
    from tests.support import gitkit

    real = gitkit.make_config

    def unhurried(repo: Path, **approval: object) -> object:
        config = real(repo, **approval)
        execution = config.execution.model_copy(update={"batch_window": 3600.0})
        return config.model_copy(update={"execution": execution})

    monkeypatch.setattr(gitkit, "make_config", unhurried)


CONFIG = """\
repo: repo
approval:
  approvers: ["alice@example.com", "*@ops.example.com"]
tools:
  greet: {kind: echo}
"""
SLUGS = [chr(c) for c in range(ord("a"), ord("a") + 10)]  # over BATCH_MIN
BOT = {
    "GIT_AUTHOR_NAME": "plangate",
    "GIT_AUTHOR_EMAIL": "plangate@localhost",
    "GIT_COMMITTER_NAME": "plangate",
    "GIT_COMMITTER_EMAIL": "plangate@localhost",
}


def _write_config(repo: Path) -> Path:
    config = repo.parent / "plangate.yml"
    config.write_text(CONFIG)
    return config


def _audit(repo: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    config = _write_config(repo)
    shutil.rmtree(default_state_dir(repo), ignore_errors=True)  # history alone
    result = run_cli("audit", "--json", "--config", str(config))
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def _plans(repo: Path, slugs: list[str]) -> None:
    """Plans that differ (a copy of a plan that ran would be refused as already executed)."""
    for slug in slugs:
        write_plan(repo, slug, greet_plan(f"Greet {slug}", "Say hello", f'"{slug}"'))
    commit_all(repo, "agent proposes", AGENT)


def _plans_in(repo: Path, rev: str) -> list[str]:
    out = git(repo, "log", "-1", "--format=%(trailers:key=Plan,valueonly)", rev)
    return [line for line in out.splitlines() if line]


def _controller_subjects(repo: Path) -> list[str]:
    subjects = git(repo, "log", "--author=plangate@localhost", "--format=%s").splitlines()
    return [s for s in subjects if s != "plangate: record policy"]


def test_batched_freezes_and_starts_audit_clean_and_read_per_plan(repo: Path) -> None:
    _plans(repo, SLUGS)
    with controller(repo) as ctl:
        ctl.reconcile()
    for slug in SLUGS:
        edit_status(repo, slug, "approved")
    approval = commit_all(repo, "approve them all", ALICE)
    run_once(repo)

    subjects = _controller_subjects(repo)
    # the first event of a pass is committed alone, at once; the others share commits (a
    # slow machine may cut them in more than one batch: each holds BATCH_MIN or more)
    assert subjects[-1] == "plangate: freeze plans/a"
    assert any(re.fullmatch(r"plangate: freeze \d+ plans", s) for s in subjects)
    assert "plangate: start plans/a" in subjects
    rows = git(repo, "log", "--author=plangate@localhost", "--format=%H %s").splitlines()
    batched = [
        sha
        for sha, _, subject in (r.partition(" ") for r in rows)
        if re.fullmatch(r"plangate: start \d+ plans", subject)
    ]
    assert batched
    named = [plan for sha in batched for plan in _plans_in(repo, sha)]
    assert sorted(named) == [f"plans/{s}" for s in SLUGS[1:]]
    for sha in batched:
        groups = git(repo, "log", "-1", "--format=%(trailers:key=Approval-Commit,valueonly)", sha)
        assert groups.split() == [approval] * len(_plans_in(repo, sha))  # one per group
    every = event_subjects(repo)
    for slug in SLUGS:
        for event in ("freeze", "start", "complete"):
            assert every.count(f"plangate: {event} plans/{slug}") == 1

    code, report = _audit(repo)
    assert code == 0, report["findings"]
    executions = {e["plan"]: e for e in report["executions"]}
    assert set(executions) == {f"plans/{s}" for s in SLUGS}
    for execution in executions.values():
        assert execution["approval_valid"] and execution["hash_ok"], execution
        assert execution["approver"] == "alice@example.com"
        assert execution["approval_commit"] == approval
        assert execution["outcome"] == "complete"

    result = run_cli("status", "--json", "--config", str(_write_config(repo)))
    status = {p["plan"]: p for p in json.loads(result.stdout)}
    for slug in SLUGS:
        plan = status[f"plans/{slug}"]
        assert plan["status"] == "completed" and plan["approver"] == "alice@example.com"
        started = [n for n in plan["notes"] if "plangate: start" in n]
        assert started and started[0].endswith(f"plangate: start plans/{slug}")


def _forge_batch(repo: Path, message: str, slugs: list[str]) -> None:
    for slug in slugs:
        edit_status(repo, slug, "executing")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, env=BOT)


def _frozen(repo: Path, slugs: list[str]) -> None:
    _plans(repo, slugs)
    with controller(repo) as ctl:
        ctl.reconcile()


def test_a_forged_batch_cannot_lend_one_plans_approval_to_another(repo: Path) -> None:
    _frozen(repo, ["a", "b"])
    edit_status(repo, "a", "approved")
    approval = commit_all(repo, "approve a only", ALICE)
    message = (
        "plangate: start 2 plans\n\n"
        f"Plan: plans/a\nPlan-Event: start\nApproval-Commit: {approval}\n"
        "Plan: plans/b\nPlan-Event: start\n"
        "Controller: forged\n"
        "Controller-Seal: " + "5e" * 32 + "\n"  # a fresh clone cannot verify it (round 69)
    )
    _forge_batch(repo, message, ["a", "b"])
    code, report = _audit(repo)
    assert code == 1
    flagged = {f["plan"] for f in report["findings"] if f["kind"] == "start-without-approval"}
    assert flagged == {"plans/b"}  # a's group is a valid start; b's has no approval
    executions = {e["plan"]: e for e in report["executions"]}
    assert executions["plans/a"]["approval_valid"]
    assert not executions["plans/b"]["approval_valid"]


def test_a_batch_naming_a_plan_twice_or_not_at_all_is_unexplained(repo: Path) -> None:
    _frozen(repo, ["a", "b"])
    for slug in ("a", "b"):
        edit_status(repo, slug, "approved")
    approval = commit_all(repo, "approve both", ALICE)
    message = (
        "plangate: start 2 plans\n\n"
        f"Plan: plans/a\nPlan-Event: start\nApproval-Commit: {approval}\n"
        f"Plan: plans/a\nPlan-Event: start\nApproval-Commit: {approval}\n"
        "Controller: forged\n"
    )
    _forge_batch(repo, message, ["a", "b"])
    code, report = _audit(repo)
    assert code == 1
    unexplained = {f["plan"] for f in report["findings"] if f["kind"] == "controller-unexplained"}
    assert unexplained == {"plans/a", "plans/b"}


def test_a_batch_group_with_a_wrong_event_is_unexplained(repo: Path) -> None:
    _frozen(repo, ["a", "b"])
    for slug in ("a", "b"):
        edit_status(repo, slug, "approved")
    approval = commit_all(repo, "approve both", ALICE)
    message = (
        "plangate: 2 plan events\n\n"
        f"Plan: plans/a\nPlan-Event: start\nApproval-Commit: {approval}\n"
        f"Plan: plans/b\nPlan-Event: complete\nApproval-Commit: {approval}\n"
        "Controller: forged\n"
    )
    _forge_batch(repo, message, ["a", "b"])
    code, report = _audit(repo)
    kinds = {(f["plan"], f["kind"]) for f in report["findings"]}
    assert code == 1
    assert ("plans/b", "controller-unexplained") in kinds  # complete cannot set executing
    # round 66: a complete of a plan never started has no cause: the commit is anyone's, its
    # start group too (one commit is the controller's or not)
    assert ("plans/a", "controller-unexplained") in kinds
    assert not any(kind == "outcome-without-start" for _, kind in kinds)
