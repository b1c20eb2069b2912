"""Helpers for the quorum tests (SPEC §11): a policy config, votes, signing keys and signed
``Plan-Approved:`` trailer commits in a merged branch."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from controller import settings
from controller.service.reconcile import Controller
from tests.support.gitenv import commit_all, git, identity, run_cli
from tests.support.gitkit import (
    AGENT,
    approve,
    head_plan,
    write_plan,
)

CAROL = ("Carol", "carol@ops.example.com")


SEC = ("Sec", "sec@example.com")


DAVE = ("Dave", "dave@example.com")


def quorum_policy(**approval: Any) -> dict[str, Any]:
    """plangate.yml data: a high-risk plan (greet is high) needs two of ops and one of security."""
    return {
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


def quorum_config(repo: Path, **approval: Any) -> settings.Config:
    data = {"repo": str(repo), **quorum_policy(**approval)}
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
