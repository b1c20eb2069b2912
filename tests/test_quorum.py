"""Quorum end to end with the controller on real repos (SPEC §11): votes across commits,
groups, voiding, and signed ``Plan-Approved:`` commits inside a merged pull request."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, git, identity, run_cli
from gitkit import AGENT, ALICE, BOB, approve, edit_status, head_plan, subjects, write_plan

from controller import settings
from controller.service.reconcile import Controller

CAROL = ("Carol", "carol@ops.example.com")
SEC = ("Sec", "sec@example.com")
DAVE = ("Dave", "dave@example.com")


def quorum_config(repo: Path, **approval: Any) -> settings.Config:
    data = {
        "repo": str(repo),
        "approval": {
            "approvers": ["*@example.com", "*@ops.example.com"],
            "groups": {"ops": ["alice@example.com", "*@ops.example.com"],
                       "security": ["sec@example.com"]},
            "rules": [{"match": {"risk": "high"},
                       "require": [{"group": "ops", "count": 2}, {"group": "security"}]}],
            **approval,
        },
        "tools": {"greet": {"kind": "echo", "risk": "high", "estimate": {"seconds": 2}}},
    }  # fmt: skip
    return settings.config_from_data(data, repo.parent / "plangate.yml")


def run_once(repo: Path, **approval: Any) -> None:
    ctl = Controller(quorum_config(repo, **approval))
    try:
        ctl.run_once()
    finally:
        ctl.close()


def submitted(repo: Path) -> None:
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run_once(repo)
    frozen = head_plan(repo)["frozen"]
    assert frozen["risk"] == "high" and frozen["estimate"] == {"seconds": 2.0, "cost_usd": 0.0}
    assert frozen["policy"] == {
        "rule": 0,
        "require": [{"group": "ops", "count": 2}, {"group": "security", "count": 1}],
    }


def vote(repo: Path, who: tuple[str, str]) -> dict[str, Any]:
    approve(repo, who=who)
    run_once(repo)
    return head_plan(repo)


def voters(plan: dict[str, Any]) -> list[str]:
    return [a["by"] for a in plan["approval"]["approvals"]]


def test_one_then_two_then_three_approvals_with_a_repeat_and_an_outsider(repo: Path) -> None:
    submitted(repo)
    plan = vote(repo, ALICE)
    assert plan["plan"]["status"] == "pending_approval"
    assert plan["approval"]["status"] == "partial"
    assert voters(plan) == ["alice@example.com"]
    assert plan["approval"]["missing"] == "1 more from ops, 1 from security"
    assert subjects(repo)[0] == "plangate: partial plans/greet"

    plan = vote(repo, ALICE)  # the same person again counts once
    assert plan["approval"]["status"] == "partial" and voters(plan) == ["alice@example.com"]

    plan = vote(repo, DAVE)  # an approver in neither group
    assert plan["approval"]["status"] == "refused"
    assert plan["approval"]["code"] == "E_APPROVER_NOT_ALLOWED"
    assert voters(plan) == ["alice@example.com"]  # what was collected stays
    assert plan["plan"]["status"] == "pending_approval"

    plan = vote(repo, BOB)
    assert plan["approval"]["missing"] == "1 from security"
    assert voters(plan) == ["alice@example.com", "bob@ops.example.com"]

    plan = vote(repo, SEC)
    assert plan["plan"]["status"] == "completed"
    assert plan["approval"]["status"] == "approved" and plan["approval"]["by"] == "sec@example.com"
    assert voters(plan) == ["alice@example.com", "bob@ops.example.com", "sec@example.com"]


def test_a_change_to_hashed_content_voids_the_votes(repo: Path) -> None:
    submitted(repo)
    vote(repo, ALICE)
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text().replace("who: world", "who: moon"))
    commit_all(repo, "change greet", AGENT)
    run_once(repo)  # frozen again
    plan = vote(repo, BOB)
    assert voters(plan) == ["bob@ops.example.com"]
    assert plan["approval"]["missing"] == "1 more from ops, 1 from security"


def test_a_human_cannot_forge_votes_in_the_approval_block(repo: Path) -> None:
    submitted(repo)
    vote(repo, ALICE)
    path = repo / "plans/greet/PLAN.yml"
    text = path.read_text().replace(
        "  missing:", "  - {by: sec@example.com, at: x, commit: y}\n  missing:"
    )
    assert "by: sec@example.com" in text
    path.write_text(text.replace("status: pending_approval", "status: approved", 1))
    commit_all(repo, "approve, with a vote added", BOB)
    run_once(repo)
    plan = head_plan(repo)
    assert plan["approval"]["status"] == "partial"
    assert voters(plan) == ["alice@example.com", "bob@ops.example.com"]


def test_without_a_matching_rule_one_approval_runs_as_before(repo: Path) -> None:
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    low = {"rules": [{"match": {"risk": "high", "paths": ["plans/other/**"]},
                      "require": [{"count": 2}]}]}  # fmt: skip
    run_once(repo, **low)
    approve(repo, who=ALICE)
    run_once(repo, **low)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed" and "approvals" not in plan["approval"]


# --- pull requests ----------------------------------------------------------------------


def _key(tmp_path: Path, name: str) -> Path:
    key = tmp_path / f"{name}.key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    found = {name: _key(tmp_path, name) for name in ("alice", "sec", "mallory")}
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(
        "".join(
            f"{email} {(found[n].with_suffix('.key.pub')).read_text()}"
            for n, email in (("alice", "alice@example.com"), ("sec", "sec@example.com"))
        )
    )
    found["allowed"] = allowed
    return found


def trailer_approval(
    repo: Path, who: tuple[str, str], key: Path | None
) -> subprocess.CompletedProcess[str]:
    git(repo, "config", "user.name", who[0])
    git(repo, "config", "user.email", who[1])
    git(repo, "config", "gpg.format", "ssh")
    if key is not None:
        git(repo, "config", "user.signingkey", str(key))
    else:
        git(repo, "config", "--unset", "user.signingkey", check=False)
    return run_cli("approve", "--trailer", "plans/greet", cwd=repo)


def merge(repo: Path, branch: str, who: tuple[str, str]) -> None:
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", f"Merge {branch}", branch, env=identity(*who))


def test_a_pull_request_with_two_signed_trailer_approvals_merged_by_a_third_person(
    repo: Path, keys: dict[str, Path]
) -> None:
    submitted(repo)
    git(repo, "switch", "-q", "-c", "review")
    assert trailer_approval(repo, ALICE, keys["alice"]).returncode == 0
    done = trailer_approval(repo, SEC, keys["sec"])
    assert done.returncode == 0, done.stderr
    assert "Plan-Approved: plans/greet sha256:" in git(repo, "log", "-1", "--format=%B")
    edit_status(repo, "greet", "approved")
    commit_all(repo, "ready to merge", AGENT)
    merge(repo, "review", CAROL)
    run_once(repo, allowed_signers=str(keys["allowed"]))
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed", plan["approval"]
    assert sorted(voters(plan)) == [
        "alice@example.com",
        "carol@ops.example.com",
        "sec@example.com",
    ]


def test_unsigned_or_unknown_key_or_other_hash_trailers_never_count(
    repo: Path, keys: dict[str, Path]
) -> None:
    submitted(repo)
    git(repo, "switch", "-q", "-c", "review")
    # unsigned: the command refuses to make one without a key, so write it by hand
    plan_hash = head_plan(repo)["frozen"]["hash"]
    git(repo, "commit", "-q", "--allow-empty", "-m",
        f"approve\n\nPlan-Approved: plans/greet {plan_hash}", env=identity(*BOB))  # fmt: skip
    assert trailer_approval(repo, ("Mallory", "sec@example.com"), keys["mallory"]).returncode == 0
    git(repo, "commit", "-q", "--allow-empty", "-S", "-m",
        "approve\n\nPlan-Approved: plans/greet sha256:" + "0" * 64,
        env={**identity(*ALICE)})  # fmt: skip
    edit_status(repo, "greet", "approved")
    commit_all(repo, "ready to merge", AGENT)
    merge(repo, "review", CAROL)
    run_once(repo, allowed_signers=str(keys["allowed"]))
    plan = head_plan(repo)
    assert plan["approval"]["status"] == "partial"
    assert voters(plan) == ["carol@ops.example.com"]
