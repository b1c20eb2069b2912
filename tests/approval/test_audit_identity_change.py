"""A change of the controller's ``identity`` (docs/operations.md: a restart, the state kept)
and the audit across it (round 126, atk126d ``identity-change-splits-audit``): the audit read
ONE identity for the whole history, so the other identity's runs were missing and its commits
flagged (``illegal``, ``owned-block-changed``, ``log-changed``, ``policy-changed``). The
controller's first record under the new identity names the old one (``Previous-Identity:``,
its state directory's record held its previous record), and the audit follows the identity
from that record on: ``--config``, ``--controller`` either identity, with or without the
record of its commits.

Real repos, the real ``plangate run --once`` and ``audit`` in subprocesses.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tests.support.gitenv import AGENT, ALICE, MALLORY, commit_all, git, run_cli
from tests.support.gitkit import PLAN

OLD, NEW = "plangate@localhost", "bot@plangate.internal"

CONFIG = """\
repo: {repo}
state_dir: {state}
{identity}
approval:
  approvers: ["alice@example.com"]
tools:
  greet: {{kind: echo}}
"""


def set_identity(repo: Path, email: str) -> Path:
    config = repo.parent / "plangate.yml"
    identity = f"identity: {{name: plangate, email: {email}}}"
    state = repo.parent / "state"
    config.write_text(CONFIG.format(repo=repo, state=state, identity=identity))
    return config


def write(repo: Path, plan: str) -> None:
    path = repo / plan / "PLAN.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLAN.replace("Say hello to the world", f"Say hello to {plan}"))
    commit_all(repo, f"agent: {plan}", AGENT)


def approve(repo: Path, plan: str) -> None:
    path = repo / plan / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    commit_all(repo, f"approve {plan}", ALICE)


def run(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def audit(cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("audit", "--json", *args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.returncode, json.loads(result.stdout or "{}")


def audits(repo: Path, tmp_path: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    """``audit --config`` (with the controller's record of its commits, and without it) and a
    fresh clone's ``--controller`` with either identity."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    config = repo.parent / "plangate.yml"
    bare = tmp_path / "bare.yml"
    bare.write_text(config.read_text().replace(f"{repo.parent / 'state'}", str(tmp_path / "none")))
    return {
        "config": audit(tmp_path, "--config", str(config)),
        "bare": audit(tmp_path, "--config", str(bare)),
        "old": audit(clone, "--controller", OLD),
        "new": audit(clone, "--controller", NEW),
    }


def runs(report: dict[str, Any]) -> list[tuple[str, str | None]]:
    return sorted((e["plan"], e["outcome"]) for e in report["executions"] if e["approval_valid"])


def renamed(repo: Path) -> Path:
    """``plans/p1`` run under the old identity, ``plans/p2`` frozen by it; the identity
    changed (a restart, the state kept); ``p2`` approved and run, ``plans/p3`` written and run
    under the new one."""
    config = set_identity(repo, OLD)
    write(repo, "plans/p1")
    write(repo, "plans/p2")
    run(config)
    approve(repo, "plans/p1")
    run(config)
    config = set_identity(repo, NEW)
    run(config)
    approve(repo, "plans/p2")
    write(repo, "plans/p3")
    run(config)
    approve(repo, "plans/p3")
    run(config)
    return config


def test_every_run_across_an_identity_change_is_audited_valid(repo: Path, tmp_path: Path) -> None:
    renamed(repo)
    log = git(repo, "log", "--format=%ae %s")
    assert f"{OLD} plangate: complete plans/p1" in log
    assert f"{NEW} plangate: complete plans/p2" in log
    want = [("plans/p1", "complete"), ("plans/p2", "complete"), ("plans/p3", "complete")]
    for name, (code, report) in audits(repo, tmp_path).items():
        assert runs(report) == want, (name, report.get("executions"))
        assert (code, report["findings"]) == (0, []), (name, report["findings"][:4])


def test_the_record_under_the_new_identity_names_the_old(repo: Path) -> None:
    renamed(repo)
    grep = ["--fixed-strings", "--grep=plangate: record policy"]
    said = git(repo, "log", *grep, "--format=%ae|%(trailers:key=Previous-Identity,valueonly)")
    lines = [line for line in said.splitlines() if line.strip()]
    assert lines == [f"{NEW}|{OLD}", f"{OLD}|"], lines


def test_a_fresh_clone_without_controller_still_asks(repo: Path, tmp_path: Path) -> None:
    """Two identities recorded: git alone cannot tell whose they are (docs/approvals.md)."""
    renamed(repo)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    code, report = audit(clone)
    assert (code, report["code"]) == (2, "E_CONFIG_INVALID"), report
    assert OLD in report["message"] and NEW in report["message"], report["message"]
    assert "--controller" in report["remedy"], report


def forge_record(repo: Path, who: tuple[str, str], was: str) -> str:
    """A seal-shaped record commit naming ``who`` as the controller, claiming ``was`` before."""
    policy = repo / ".plangate" / "policy.json"
    data = policy.read_bytes().replace(OLD.encode(), who[1].encode())
    policy.write_bytes(data)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    message = (
        f"plangate: record policy\n\nPolicy-Hash: {digest}\nPrevious-Identity: {was}\n"
        f"Controller-Seal: {'ab' * 32}\n"
    )
    return commit_all(repo, message, who)


def test_a_forged_identity_change_is_not_followed_with_the_record(
    repo: Path, tmp_path: Path
) -> None:
    """Mallory's seal-shaped record naming herself after ``plangate@localhost``: the
    controller's record of its commits lacks it, so ``audit --config`` flags it and keeps the
    controller's identity; so does the config without that record (today's identity is the
    config's: no link from it is followed)."""
    config = set_identity(repo, OLD)
    write(repo, "plans/p1")
    run(config)
    approve(repo, "plans/p1")
    run(config)
    forged = forge_record(repo, MALLORY, OLD)
    write(repo, "plans/p4")
    run(config)
    bare = tmp_path / "bare.yml"
    bare.write_text(config.read_text().replace(f"{repo.parent / 'state'}", str(tmp_path / "none")))
    for how in (config, bare):
        code, report = audit(tmp_path, "--config", str(how))
        assert runs(report) == [("plans/p1", "complete")], (how, report["executions"])
        assert code == 1, how
        flagged = [(f["kind"], f["commit"]) for f in report["findings"]]
        assert flagged == [("policy-changed", forged)], (how, report["findings"])
