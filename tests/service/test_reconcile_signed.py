"""Signed approvals (require_signed) with a real SSH key and an allowed_signers file."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from controller.service.reconcile import Controller
from tests.support.gitenv import run_cli
from tests.support.gitkit import ALICE, approve, edit_status, git, head_plan, make_config, submitted


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


def test_controller_signs_its_commits_with_commit_gpgsign_and_the_audit_accepts_them(
    repo: Path, signers: tuple[Path, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``git commit-tree`` ignores commit.gpgSign; the controller applies it itself, so
    with require_signed its own commits are not flagged as forged."""
    alice, _, allowed = signers
    bot = _key(tmp_path, "bot")
    allowed.write_text(
        allowed.read_text() + f"plangate@localhost {bot.with_suffix('.pub').read_text()}"
    )
    # The controller's own git config (the service user's): sign everything with its key.
    controller_git = {
        "GIT_CONFIG_COUNT": "3",
        "GIT_CONFIG_KEY_0": "commit.gpgSign",
        "GIT_CONFIG_VALUE_0": "true",
        "GIT_CONFIG_KEY_1": "user.signingKey",
        "GIT_CONFIG_VALUE_1": str(bot),
        "GIT_CONFIG_KEY_2": "gpg.format",
        "GIT_CONFIG_VALUE_2": "ssh",
    }
    with monkeypatch.context() as env:
        for key, value in controller_git.items():
            env.setenv(key, value)
        submitted(repo)  # the freeze commit
    _signing(repo, alice)
    git(repo, "config", "user.email", "alice@example.com")
    assert run_cli("approve", "--sign", "plans/greet", cwd=repo).returncode == 0
    for key, value in controller_git.items():
        monkeypatch.setenv(key, value)
    _run(repo, allowed)
    assert head_plan(repo)["plan"]["status"] == "completed"
    monkeypatch.delenv("GIT_CONFIG_COUNT")
    for rev in ("HEAD", "HEAD~1"):  # the complete and start commits
        assert "plangate: " in git(repo, "log", "-1", "--format=%s", rev)
        verified = subprocess.run(
            ["git", "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", rev],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        assert verified.returncode == 0, verified.stderr
    config = repo.parent / "plangate.yml"
    config.write_text(
        "repo: repo\n"
        "approval: {approvers: [alice@example.com], require_signed: true, "
        f"allowed_signers: {allowed}}}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    audit = run_cli("audit", "--json", "--config", str(config))
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "forged-controller" not in audit.stdout


def _commit_one_file(gitrepo: Any, head: str) -> None:
    from controller.git.gitrepo import Person

    gitrepo.commit_files(
        branch="main",
        parent=head,
        files={"x.txt": b"x\n"},
        message="m\n",
        author=Person("plangate", "plangate@localhost"),
    )


def _controller_git(monkeypatch: pytest.MonkeyPatch, *pairs: tuple[str, str]) -> None:
    """Settings in the controller's own git config (its environment, as a service user's
    global config would be): the watched repository's .git/config is not trusted."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(pairs)))
    for n, (key, value) in enumerate(pairs):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{n}", key)
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{n}", value)


def test_commit_gpgsign_that_cannot_sign_fails_the_commit(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from controller.errors import GitError
    from controller.git.gitrepo import GitRepo

    _controller_git(monkeypatch, ("commit.gpgSign", "true"), ("gpg.program", "false"))
    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None
    with pytest.raises(GitError):
        _commit_one_file(gitrepo, head)
    assert gitrepo.branch_head("main") == head  # nothing published


def test_an_unreadable_commit_gpgsign_fails_the_commit_as_git_commit_does(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``git commit`` refuses a commit.gpgSign that is not a boolean; the controller must not
    read it as false and publish unsigned commits."""
    from controller.errors import GitError
    from controller.git.gitrepo import GitRepo

    _controller_git(monkeypatch, ("commit.gpgSign", "maybe"))
    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None
    with pytest.raises(GitError) as caught:
        _commit_one_file(gitrepo, head)
    assert "bad boolean config value 'maybe'" in str(caught.value)
    assert "commit.gpgSign" in caught.value.remedy
    assert gitrepo.branch_head("main") == head  # nothing published
