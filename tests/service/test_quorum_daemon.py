"""Quorum with the real ``plangate run`` daemon (SPEC §11): a high-risk plan needs two from
ops and one from security; direct approvals one by one, and a pull request with two signed
trailer approvals merged by a third person."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.daemonkit import running_daemon, subjects, wait_until
from tests.support.gitenv import commit_all, git
from tests.support.gitkit import AGENT, ALICE, BOB, approve, edit_status, head_plan, write_plan
from tests.support.quorumkit import CAROL, DAVE, SEC, keys, merge, trailer_approval

__all__ = ["keys"]  # the fixture


def write_config(tmp_path: Path, repo: Path, allowed: Path) -> Path:
    config = tmp_path / "plangate.yml"
    data = {
        "repo": str(repo),
        "approval": {
            "approvers": ["*@example.com", "*@ops.example.com"],
            "allowed_signers": str(allowed),
            "groups": {"ops": ["alice@example.com", "*@ops.example.com"],
                       "security": ["sec@example.com"]},
            "rules": [{"match": {"risk": "high"},
                       "require": [{"group": "ops", "count": 2}, {"group": "security"}]}],
        },
        "tools": {"greet": {"kind": "echo", "risk": "high"}},
    }  # fmt: skip
    config.write_text(json.dumps(data))
    return config


def wait_subject(repo: Path, subject: str, count: int) -> None:
    """Wait for the ``count``-th controller commit with this subject, and a clean tree."""
    wait_until(lambda: subjects(repo).count(subject) >= count, 30, f"{count}x {subject!r}")
    wait_until(lambda: git(repo, "status", "--porcelain") == "", 30, "a clean tree")


def voters(repo: Path, slug: str = "greet") -> list[str]:
    return [a["by"] for a in head_plan(repo, slug)["approval"].get("approvals") or []]


def test_two_from_ops_and_one_from_security_with_the_real_daemon(
    repo: Path, tmp_path: Path, keys: dict[str, Path]
) -> None:
    config = write_config(tmp_path, repo, keys["allowed"])
    partial, refuse = "plangate: partial plans/greet", "plangate: refuse plans/greet"
    with running_daemon(config) as daemon:
        daemon.wait_started()
        write_plan(repo)
        commit_all(repo, "add greet", AGENT)
        wait_subject(repo, "plangate: freeze plans/greet", 1)
        assert head_plan(repo)["frozen"]["risk"] == "high"

        approve(repo, who=ALICE)  # one
        wait_subject(repo, partial, 1)
        assert voters(repo) == ["alice@example.com"]
        assert head_plan(repo)["approval"]["missing"] == "1 more from ops, 1 from security"

        approve(repo, who=ALICE)  # the same person twice
        wait_subject(repo, partial, 2)
        assert voters(repo) == ["alice@example.com"]

        approve(repo, who=DAVE)  # an approver in neither group
        wait_subject(repo, refuse, 1)
        assert head_plan(repo)["approval"]["code"] == "E_APPROVER_NOT_ALLOWED"
        assert voters(repo) == ["alice@example.com"]

        approve(repo, who=BOB)  # two
        wait_subject(repo, partial, 3)
        assert head_plan(repo)["approval"]["missing"] == "1 from security"

        approve(repo, who=SEC)  # three
        wait_subject(repo, "plangate: complete plans/greet", 1)
        plan = head_plan(repo)
        assert plan["plan"]["status"] == "completed"
        assert voters(repo) == ["alice@example.com", "bob@ops.example.com", "sec@example.com"]
        assert daemon.stop() == 0


def test_a_pull_request_with_two_signed_trailer_approvals_merged_by_a_third_person(
    repo: Path, tmp_path: Path, keys: dict[str, Path]
) -> None:
    config = write_config(tmp_path, repo, keys["allowed"])
    with running_daemon(config) as daemon:
        daemon.wait_started()
        write_plan(repo, "greet")
        commit_all(repo, "add greet", AGENT)
        wait_subject(repo, "plangate: freeze plans/greet", 1)
        daemon.stop()
    # the review happens on a branch while nobody watches main's working tree
    git(repo, "switch", "-q", "-c", "review")
    assert trailer_approval(repo, ALICE, keys["alice"]).returncode == 0
    assert trailer_approval(repo, SEC, keys["sec"]).returncode == 0
    edit_status(repo, "greet", "approved")
    commit_all(repo, "ready to merge", AGENT)
    merge(repo, "review", CAROL)
    with running_daemon(config) as daemon:
        wait_subject(repo, "plangate: complete plans/greet", 1)
        assert sorted(voters(repo, "greet")) == [
            "alice@example.com",
            "carol@ops.example.com",
            "sec@example.com",
        ]
        assert daemon.stop() == 0
