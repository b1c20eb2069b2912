"""Signed approvals (require_signed) with a real SSH key and an allowed_signers file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import run_cli
from gitkit import ALICE, approve, edit_status, git, head_plan, make_config
from test_reconcile import submitted

from controller.reconcile import Controller


def _key(tmp_path: Path, name: str) -> Path:
    key = tmp_path / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


@pytest.fixture
def signers(tmp_path: Path) -> tuple[Path, Path, Path]:
    alice, mallory = _key(tmp_path, "alice"), _key(tmp_path, "mallory")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"alice@example.com {(alice.with_suffix('.pub')).read_text()}")
    return alice, mallory, allowed


def _signing(repo: Path, key: Path) -> None:
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingkey", str(key))


def _run(repo: Path, allowed: Path) -> None:
    ctl = Controller(make_config(repo, require_signed=True, allowed_signers=str(allowed)))
    try:
        ctl.run_once()
    finally:
        ctl.close()


def test_signed_approval_by_plangate_approve_executes(
    repo: Path, signers: tuple[Path, ...]
) -> None:
    alice, _, allowed = signers
    submitted(repo)
    _signing(repo, alice)
    git(repo, "config", "user.email", "alice@example.com")
    result = run_cli("approve", "--sign", "plans/greet", cwd=repo)
    assert result.returncode == 0, result.stderr
    _run(repo, allowed)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed"
    assert plan["approval"]["signature"] == "alice@example.com"


def test_unsigned_approval_is_refused(repo: Path, signers: tuple[Path, ...]) -> None:
    submitted(repo)
    approve(repo, who=ALICE)
    _run(repo, signers[2])
    assert head_plan(repo)["approval"]["code"] == "E_SIGNATURE_INVALID"


def test_forged_author_signed_by_another_key_is_refused(
    repo: Path, signers: tuple[Path, ...]
) -> None:
    _, mallory, allowed = signers
    submitted(repo)
    _signing(repo, mallory)
    edit_status(repo, "greet", "approved")
    git(repo, "add", "-A")
    env = {
        "GIT_AUTHOR_NAME": "Alice",
        "GIT_AUTHOR_EMAIL": "alice@example.com",
        "GIT_COMMITTER_NAME": "Alice",
        "GIT_COMMITTER_EMAIL": "alice@example.com",
    }
    git(repo, "commit", "-q", "-S", "-m", "approve (forged)", env=env)
    _run(repo, allowed)
    assert head_plan(repo)["approval"]["code"] == "E_SIGNATURE_INVALID"
    assert head_plan(repo)["plan"]["status"] == "pending_approval"


def test_forged_author_without_signature_is_refused(repo: Path, signers: tuple[Path, ...]) -> None:
    submitted(repo)
    approve(repo, who=("Alice (forged by Mallory)", "alice@example.com"))
    _run(repo, signers[2])
    assert head_plan(repo)["approval"]["code"] == "E_SIGNATURE_INVALID"
