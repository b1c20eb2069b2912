"""A new state directory on a branch whose controller changed its ``identity`` (the state
kept, so the change is linked by ``Previous-Identity:``) takes the old identity's commits in
their stretch of history as its own too, as the history index and the audit follow the chain.

Before this, its first start adopted only today's identity's commits: the old identity's
policy records were then no records of the controller's, so a cold scan never learnt the
``plans_dir`` they named, and a copy of a version run under that folder ran again under the
new one (SPEC §15: a version runs at most once).

Real repos, the real ``plangate run --once``, ``check`` and ``status`` in subprocesses.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.approval.test_audit_plans_dir import approve, copy_of_run, run, write
from tests.support.gitenv import AGENT, BOT, commit_all, git, run_cli

OLD, NEW = BOT[1], "bot@plangate.internal"

CONFIG = """\
repo: {repo}
state_dir: {state}
plans_dir: {folder}
identity: {{name: plangate, email: {email}}}
approval:
  approvers: ["alice@example.com"]
tools:
  greet: {{kind: echo}}
"""


def configure(repo: Path, *, email: str, folder: str, state: str) -> Path:
    config = repo.parent / "plangate.yml"
    config.write_text(
        CONFIG.format(repo=repo, state=repo.parent / state, folder=folder, email=email)
    )
    return config


def ran_then_renamed(repo: Path) -> None:
    """``plans/p1`` run under the old identity; the identity changed, the state kept (the
    link is written)."""
    config = configure(repo, email=OLD, folder="plans", state="state")
    write(repo, "plans/p1")
    commit_all(repo, "agent: plans/p1", AGENT)
    run(config)
    approve(repo, "plans/p1")
    run(config)
    run(configure(repo, email=NEW, folder="plans", state="state"))
    assert "Previous-Identity: " + OLD in git(repo, "log", "-1", "--format=%B")


def test_a_copy_under_a_new_folder_never_runs_again_after_an_identity_change(
    repo: Path,
) -> None:
    ran_then_renamed(repo)
    config = configure(repo, email=NEW, folder="ops", state="state2")
    copy_of_run(repo, "plans/p1", "ops/c1")
    run(config, "--take-over")  # the state is lost for good (docs/operations.md)
    approve(repo, "ops/c1")
    predicted = run_cli(
        "check", "--config", str(config), "--base", "HEAD~1", "--head", "HEAD",
        "--as", "alice@example.com", "--format", "json", cwd=repo,
    )  # fmt: skip
    assert "E_ALREADY_EXECUTED" in predicted.stdout, predicted.stdout[-2000:]
    run(config)
    assert "plangate: start ops/c1" not in git(repo, "log", "--format=%s")
    shown = run_cli("status", "--json", "--config", str(config))
    rows = {row["plan"]: row for row in json.loads(shown.stdout)}
    assert "E_ALREADY_EXECUTED" in json.dumps(rows["ops/c1"]), rows["ops/c1"]


def test_the_old_identitys_commits_are_adopted_only_before_the_change(repo: Path) -> None:
    """After the link, the old identity is no longer the controller's: a commit under it is
    anyone's, and a new state directory does not take it for its own (its 'start' of a
    pending plan's version keeps nothing from running)."""
    ran_then_renamed(repo)
    config = configure(repo, email=NEW, folder="plans", state="state2")
    write(repo, "plans/p2")
    commit_all(repo, "agent: plans/p2", AGENT)
    run(config, "--take-over")
    frozen = git(repo, "show", "HEAD:plans/p2/PLAN.yml")
    digest = next(
        line.split()[-1] for line in frozen.splitlines() if line.strip().startswith("hash:")
    )
    (repo / "plans/p9").mkdir(parents=True)
    (repo / "plans/p9/PLAN.yml").write_text(frozen.replace("pending_approval", "executing", 1))
    forged = f"plangate: start plans/p9\n\nPlan-Hash: {digest}\nPlan-Status: executing\n"
    forgery = commit_all(repo, forged, BOT)
    config = configure(repo, email=NEW, folder="plans", state="state3")
    run(config, "--take-over")
    adopted = (repo.parent / "state3" / "commits").read_text()
    old_run = git(repo, "log", "--format=%H", "--author", OLD, "--grep=complete plans/p1")
    assert old_run.strip() and old_run.strip() in adopted  # its own, in its stretch
    assert forgery not in adopted  # after the change: anyone's
    approve(repo, "plans/p2")
    run(config)
    assert "plangate: complete plans/p2" in git(repo, "log", "--format=%s")


def test_a_state_directory_with_its_key_alone_follows_the_change(repo: Path) -> None:
    """The state lost but its ``commit.key`` put back (docs/operations.md, Restore): the key
    verifies the old identity's sealed commits in their stretch and the link, so the copy is
    refused as with trust on first use, without ``--take-over``."""
    ran_then_renamed(repo)
    (repo.parent / "state2").mkdir()
    key = (repo.parent / "state" / "commit.key").read_bytes()
    (repo.parent / "state2" / "commit.key").write_bytes(key)
    (repo.parent / "state2" / "commit.key").chmod(0o600)
    config = configure(repo, email=NEW, folder="ops", state="state2")
    copy_of_run(repo, "plans/p1", "ops/c1")
    run(config)
    adopted = (repo.parent / "state2" / "commits").read_text()
    old_run = git(repo, "log", "--format=%H", "--author", OLD, "--grep=complete plans/p1")
    assert old_run.strip() and old_run.strip() in adopted
    approve(repo, "ops/c1")
    run(config)
    assert "plangate: start ops/c1" not in git(repo, "log", "--format=%s")
