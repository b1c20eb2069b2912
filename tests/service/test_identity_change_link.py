"""The ``Previous-Identity:`` link of a change of the controller's ``identity`` made in the
same restart as something that rebuilds the history index (round 127, atk127p
``identity-change-with-move-unlinked``, atk127d ``identity-and-folder-changed-together-
unlinked``). The first record under the new identity named the old one only when the index
still held the old identity's last record: a ``plans_dir`` change (or a deleted index file)
rebuilt it under the new identity, which has no record yet, so no link was written and every
reader (the audit, ``check``, a later rebuilt index) took the old identity's commits for
anyone's. The link is decided by the state directory's record of the commits the controller
made, and a history index read before the link is read again after it.

Real repos, the real ``plangate run --once``, ``check``, ``status`` and ``audit`` in
subprocesses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.approval.test_adopt_identity_chain import configure
from tests.approval.test_audit_plans_dir import approve, copy_of_run, run, write
from tests.support.gitenv import AGENT, BOT, commit_all, git, run_cli

OLD, NEW = BOT[1], "bot@plangate.internal"


def records(repo: Path) -> list[str]:
    """``<author>|<Previous-Identity>`` of each ``plangate: record policy``, newest first."""
    grep = ["--first-parent", "--fixed-strings", "--grep=plangate: record policy"]
    said = git(repo, "log", *grep, "--format=%ae|%(trailers:key=Previous-Identity,valueonly)")
    return [line.strip() for line in said.splitlines() if line.strip()]


def ran(repo: Path, email: str = OLD, plan: str = "plans/p1") -> None:
    """``plan`` written, approved and run under ``email`` in ``plans``."""
    config = configure(repo, email=email, folder="plans", state="state")
    write(repo, plan)
    commit_all(repo, f"agent: {plan}", AGENT)
    run(config)
    approve(repo, plan)
    run(config)
    assert f"plangate: complete {plan}" in git(repo, "log", "--format=%s")


def audit(cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("audit", "--json", *args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.returncode, json.loads(result.stdout or "{}")


def runs(report: dict[str, Any]) -> list[tuple[str, str | None]]:
    return sorted((e["plan"], e["outcome"]) for e in report["executions"] if e["approval_valid"])


def test_identity_and_folder_changed_at_one_restart_are_linked(repo: Path) -> None:
    ran(repo)
    config = configure(repo, email=NEW, folder="ops", state="state")
    run(config)
    assert records(repo) == [f"{NEW}|{OLD}", f"{OLD}|"]


def test_after_both_changes_every_reader_follows_the_old_identitys_runs(
    repo: Path, tmp_path: Path
) -> None:
    """The copy of a version run under the old identity and folder is refused and ``check``
    predicts it; ``audit --config`` and a fresh clone's ``--controller`` with either identity
    list both identities' runs and flag none of the controller's commits."""
    ran(repo)
    config = configure(repo, email=NEW, folder="ops", state="state")
    copy_of_run(repo, "plans/p1", "ops/c1")
    write(repo, "ops/t1")
    commit_all(repo, "agent: ops/t1", AGENT)
    run(config)
    approve(repo, "ops/c1")
    predicted = run_cli(
        "check", "--config", str(config), "--base", "HEAD~1", "--head", "HEAD",
        "--as", "alice@example.com", "--format", "json", cwd=repo,
    )  # fmt: skip
    assert "E_ALREADY_EXECUTED" in predicted.stdout, predicted.stdout[-2000:]
    approve(repo, "ops/t1")
    run(config)
    assert "plangate: start ops/c1" not in git(repo, "log", "--format=%s")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    want = [("ops/t1", "complete"), ("plans/p1", "complete")]
    for how in (("--config", str(config)), ("--controller", OLD), ("--controller", NEW)):
        code, report = audit(clone, *how)
        assert runs(report) == want, (how, report.get("executions"))
        assert (code, report["findings"]) == (0, []), (how, report["findings"][:4])


def test_a_deleted_index_at_the_identity_change_keeps_the_link(repo: Path) -> None:
    """Deleting the index file is always safe (docs/operations.md), also in the restart that
    changes the identity."""
    ran(repo)
    for name in ("index.sqlite", "memory.sqlite"):
        (repo.parent / "state" / name).unlink()
    run(configure(repo, email=NEW, folder="plans", state="state"))
    assert records(repo) == [f"{NEW}|{OLD}", f"{OLD}|"]


def test_a_return_to_an_earlier_identity_with_a_move_names_the_one_before(repo: Path) -> None:
    """``A -> B``, then back to ``A`` with ``plans_dir`` changed in one restart: the rebuilt
    index held ``A``'s first record (its own identity), yet the controller's previous record
    was ``B``'s: the record under ``A`` names ``B``."""
    ran(repo)
    run(configure(repo, email=NEW, folder="plans", state="state"))
    run(configure(repo, email=OLD, folder="ops", state="state"))
    assert records(repo) == [f"{OLD}|{NEW}", f"{NEW}|{OLD}", f"{OLD}|"]


def test_the_pass_that_links_reads_the_old_identitys_runs_as_its_own(repo: Path) -> None:
    """The old identity ran ``plans/p1``, moved to ``ops``; identity changed and ``plans``
    back in one restart: the index rebuilt before the link is read again after it, so
    ``status`` shows the old identity's run ``completed``, not a person's illegal
    transition, and Alice's approval of it again starts nothing."""
    ran(repo)
    run(configure(repo, email=OLD, folder="ops", state="state"))
    config = configure(repo, email=NEW, folder="plans", state="state")
    run(config)
    assert records(repo)[0] == f"{NEW}|{OLD}"
    shown = run_cli("status", "--json", "--config", str(config))
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr[-2000:]
    row = {r["plan"]: r for r in json.loads(shown.stdout)}["plans/p1"]
    assert (row["status"], row["problem"]) == ("completed", None), row
    assert "E_ILLEGAL_TRANSITION" not in json.dumps(row["notes"]), row["notes"]
    path = repo / "plans/p1/PLAN.yml"
    path.write_text(path.read_text().replace("status: completed", "status: approved", 1))
    commit_all(repo, "approve plans/p1 again", ("Alice", "alice@example.com"))
    run(config)
    assert git(repo, "log", "--format=%s").count("plangate: start plans/p1") == 1


def test_a_restart_without_an_identity_change_names_no_identity(repo: Path) -> None:
    """A ``plans_dir`` change alone records the policy with no ``Previous-Identity:``."""
    ran(repo)
    run(configure(repo, email=OLD, folder="ops", state="state"))
    assert records(repo) == [f"{OLD}|", f"{OLD}|"]
