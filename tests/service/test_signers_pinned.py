"""The ``allowed_signers`` file is policy: read once per pass, recorded before it is used.

Round 125 (``signers-file-change-unrecorded``): a controller that lived on while the operator
edited the file (no config change, no reload) checked signatures against the edited file but
kept naming the policy recorded from the old text: it ran an approval signed with a rotated
key that the fresh-clone audit then called ``start-without-approval``, and refused one by a
revoked key while the record at the refusal still listed it. Here one controller object
lives through the edits, as the daemon does (``run_once`` passes on it, never a new one).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from controller.errors import ConfigInvalid
from controller.service.reconcile import Controller
from tests.support.gitenv import identity, run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    PLAN,
    commit_all,
    edit_status,
    git,
    head_plan,
    make_config,
    write_plan,
)

RECORD = "plangate: record policy"


def _key(folder: Path, name: str) -> tuple[Path, str]:
    key = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key, key.with_suffix(".pub").read_text().strip()


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    folder = tmp_path / "keys"
    folder.mkdir()
    return {name: _key(folder, name) for name in ("alice", "alice2", "bob", "bot")}


def _write_signers(path: Path, keys: dict[str, tuple[Path, str]], *lines: str) -> None:
    """Replace the file the way an operator should: a new file renamed over the old one."""
    text = f"plangate@localhost {keys['bot'][1]}\n" + "".join(
        f"{who} {keys[name][1]}\n" for who, name in (line.split("=") for line in lines)
    )
    new = path.with_name(path.name + ".new")
    new.write_text(text)
    os.replace(new, path)


@contextmanager
def _signing_controller(monkeypatch: pytest.MonkeyPatch, bot: Path) -> Iterator[pytest.MonkeyPatch]:
    """The controller's own git config signs its commits (so a fresh clone's audit trusts its
    records under require_signed); the humans' commits stay as they make them."""
    with monkeypatch.context() as env:
        pairs = {"commit.gpgSign": "true", "user.signingKey": str(bot), "gpg.format": "ssh"}
        env.setenv("GIT_CONFIG_COUNT", str(len(pairs)))
        for n, (key, value) in enumerate(pairs.items()):
            env.setenv(f"GIT_CONFIG_KEY_{n}", key)
            env.setenv(f"GIT_CONFIG_VALUE_{n}", value)
        yield env


def _signed_approval(repo: Path, slug: str, key: Path, who: tuple[str, str]) -> str:
    edit_status(repo, slug, "approved")
    git(repo, "add", "-A")
    ssh = ("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}")
    git(repo, *ssh, "commit", "-q", "-S", "-m", f"approve {slug}", env=identity(*who))
    return git(repo, "rev-parse", "HEAD").strip()


def _commit_of(repo: Path, subject: str) -> str:
    for line in git(repo, "log", "--format=%H %s").splitlines():
        sha, _, said = line.partition(" ")
        if said == subject:
            return sha
    raise AssertionError(f"no commit {subject!r}")


def _policy_at(repo: Path, rev: str) -> tuple[str, dict[str, Any]]:
    data = git(repo, "show", f"{rev}:.plangate/policy.json").encode()
    return "sha256:" + hashlib.sha256(data).hexdigest(), json.loads(data)


def _policy_hash(repo: Path, rev: str) -> str:
    body = git(repo, "log", "-1", "--format=%B", rev)
    return next(
        line.split(": ", 1)[1] for line in body.splitlines() if line.startswith("Policy-Hash: ")
    )


def _records(repo: Path) -> int:
    return git(repo, "log", "--format=%s").splitlines().count(RECORD)


def test_an_edited_signers_file_is_recorded_before_the_approvals_it_judges(
    repo: Path, tmp_path: Path, keys: dict[str, tuple[Path, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    signers = tmp_path / "allowed_signers"
    _write_signers(signers, keys, "alice@example.com=alice", "bob@ops.example.com=bob")
    for slug in ("rot", "drop"):
        write_plan(repo, slug, PLAN.replace("Greet", f"Greet {slug}"))
    commit_all(repo, "add plans", AGENT)
    config = make_config(repo, require_signed=True, allowed_signers=str(signers))
    ctl = Controller(config)
    try:
        with _signing_controller(monkeypatch, keys["bot"][0]):
            ctl.run_once()  # freezes both, records the policy of the first text
        # the operator rotates Alice's key and revokes Bob's: the file only, no reload
        _write_signers(signers, keys, "alice@example.com=alice2")
        _signed_approval(repo, "rot", keys["alice2"][0], ALICE)
        with _signing_controller(monkeypatch, keys["bot"][0]):
            ctl.run_once()
        _signed_approval(repo, "drop", keys["bob"][0], BOB)
        with _signing_controller(monkeypatch, keys["bot"][0]):
            ctl.run_once()
    finally:
        ctl.close()
    assert head_plan(repo, "rot")["plan"]["status"] == "completed"
    start = _commit_of(repo, "plangate: start plans/rot")
    named, doc = _policy_at(repo, start)
    assert _policy_hash(repo, start) == named  # the start names the record in its tree
    assert keys["alice2"][1].split()[1] in doc["approval"]["allowed_signers"]
    assert keys["alice"][1].split()[1] not in doc["approval"]["allowed_signers"]
    assert head_plan(repo, "drop")["approval"]["code"] == "E_SIGNATURE_INVALID"
    _, at_refusal = _policy_at(repo, _commit_of(repo, "plangate: refuse plans/drop"))
    assert keys["bob"][1].split()[1] not in at_refusal["approval"]["allowed_signers"]
    assert _records(repo) == 2  # the first text and the edited one, each once
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    audit = run_cli("audit", "--json", cwd=clone)
    report = json.loads(audit.stdout)
    runs = [e for e in report["executions"] if e["plan"] == "plans/rot"]
    assert [(e["approval_valid"], e["policy_hash"]) for e in runs] == [(True, named)], runs
    assert report["findings"] == [], report["findings"]
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_the_same_text_is_recorded_once_however_often_the_file_is_written(
    repo: Path, tmp_path: Path, keys: dict[str, tuple[Path, str]]
) -> None:
    signers = tmp_path / "allowed_signers"
    _write_signers(signers, keys, "alice@example.com=alice")
    write_plan(repo, "one")
    commit_all(repo, "add a plan", AGENT)
    ctl = Controller(make_config(repo, allowed_signers=str(signers)))
    try:
        ctl.run_once()
        pinned = ctl.config
        _write_signers(signers, keys, "alice@example.com=alice")  # same bytes, a new file
        ctl.run_once()
        assert ctl.config is pinned  # the policy in force is not computed again
    finally:
        ctl.close()
    assert _records(repo) == 1


@pytest.mark.parametrize("how", ["deleted", "not-utf8", "folder"])
def test_an_unreadable_signers_file_stops_the_pass_and_spends_nothing(
    repo: Path, tmp_path: Path, keys: dict[str, tuple[Path, str]], how: str
) -> None:
    """Without require_signed too: the file says whose signed content makes a writer, so no
    pass judges without it (and none with an older text)."""
    signers = tmp_path / "allowed_signers"
    _write_signers(signers, keys, "alice@example.com=alice")
    write_plan(repo, "one")
    commit_all(repo, "add a plan", AGENT)
    ctl = Controller(make_config(repo, allowed_signers=str(signers)))
    try:
        ctl.run_once()
        records = _records(repo)
        _signed_approval(repo, "one", keys["alice"][0], ALICE)
        good = signers.read_bytes()
        signers.unlink()
        if how == "not-utf8":
            signers.write_bytes(good + b"# \xff\n")
        elif how == "folder":
            signers.mkdir()
        with pytest.raises(ConfigInvalid) as caught:
            ctl.run_once()
        assert str(signers) in caught.value.message
        assert "allowed_signers" in caught.value.remedy
        assert head_plan(repo, "one")["plan"]["status"] == "approved"  # not decided, not spent
        assert _records(repo) == records
        if how == "folder":
            signers.rmdir()
        signers.write_bytes(good)
        ctl.run_once()
    finally:
        ctl.close()
    assert head_plan(repo, "one")["plan"]["status"] == "completed"


def _config_file(repo: Path, signers: Path) -> Path:
    path = repo.parent / "plangate.yml"
    path.write_text(
        f"repo: {repo}\nstate_dir: {repo.parent / 'state'}\n"
        f"approval: {{approvers: [alice@example.com], allowed_signers: {signers}}}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    return path


@pytest.mark.parametrize("command", ["run", "check", "audit"])
def test_commands_refuse_an_unreadable_signers_file_with_its_name(
    repo: Path, tmp_path: Path, command: str
) -> None:
    """``run --once``, ``check`` and ``audit --config`` read the file as a pass does: one
    that is gone is E_CONFIG_INVALID naming it (exit 2), never a verdict without it."""
    write_plan(repo, "one")
    commit_all(repo, "add a plan", AGENT)
    git(repo, "branch", "pr")
    config = _config_file(repo, tmp_path / "gone.signers")
    args = {
        "run": ["run", "--once"],
        "check": ["check", "--base", "main", "--head", "pr"],
        "audit": ["audit", "--json"],
    }[command]
    if command == "audit":  # a history to audit: a pass with the file there
        (tmp_path / "gone.signers").write_text("")
        assert run_cli("run", "--once", "--config", str(config), cwd=repo).returncode == 0
        (tmp_path / "gone.signers").unlink()
    done = run_cli(*args, "--config", str(config), cwd=repo)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "E_CONFIG_INVALID" in out and "gone.signers" in out, out
    assert "Traceback" not in out, out


def test_a_pinned_config_keeps_the_text_it_read(tmp_path: Path) -> None:
    """One reading: the copy holds the bytes read, the same text is the same copy, and a
    recorded text is written under the name the controller's pin of it has."""
    from controller.approval import recorded
    from controller.settings.signersfile import pin_signers

    signers = tmp_path / "allowed_signers"
    signers.write_text("alice@example.com ssh-ed25519 AAAA\n")
    config = make_config(tmp_path, allowed_signers=str(signers))
    first = pin_signers(config, tmp_path / "pins")
    signers.write_text("bob@ops.example.com ssh-ed25519 BBBB\n")
    copy = first.approval.allowed_signers
    assert copy is not None and copy.read_text() == "alice@example.com ssh-ed25519 AAAA\n"
    assert "AAAA" in recorded.policy_document(first)["approval"]["allowed_signers"]
    second = pin_signers(config, tmp_path / "pins")
    assert second.approval.allowed_signers != copy
    doc = recorded.policy_document(first)
    again = recorded.config_of(doc, tmp_path / "pins").approval.allowed_signers
    assert again == copy
