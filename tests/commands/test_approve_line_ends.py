"""``plangate approve`` (and ``reject``) under a ``.gitattributes`` ``text eol=crlf``: the CRLF
checkout git calls clean is no uncommitted edit, and the file written back is what git
would check out, leaving ``git status`` clean (round 75: refused ``E_USAGE``, "has
uncommitted edits; approving would not cover what you see")."""

from __future__ import annotations

from pathlib import Path

from tests.support.gitenv import ALICE, commit_all, git, identity, run_cli
from tests.support.gitkit import head_plan, write_plan


def _frozen_crlf(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    plan = write_plan(repo)
    (repo / ".gitattributes").write_text("plans/*/PLAN.yml text eol=crlf\n")
    commit_all(repo, "agent writes a plan")
    plan.unlink()
    git(repo, "checkout", "-q", "--", ".")
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    assert head_plan(repo)["frozen"]["hash"]
    assert b"\r\n" in plan.read_bytes() and git(repo, "status", "--porcelain") == ""
    return config, plan


def _approve(repo: Path, config: Path) -> tuple[int, str]:
    done = run_cli("approve", "plans/greet", "--config", str(config), cwd=repo,
                   env=identity(*ALICE))  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_approve_a_crlf_checkout_git_calls_clean(repo: Path, tmp_path: Path) -> None:
    config, plan = _frozen_crlf(repo, tmp_path)
    code, said = _approve(repo, config)
    assert code == 0, said
    assert head_plan(repo)["plan"]["status"] == "approved"
    raw = plan.read_bytes()
    assert b"status: approved\r\n" in raw and raw.count(b"\n") == raw.count(b"\r\n")
    assert git(repo, "status", "--porcelain") == ""


def test_an_edit_under_the_attribute_is_still_refused(repo: Path, tmp_path: Path) -> None:
    config, plan = _frozen_crlf(repo, tmp_path)
    plan.write_bytes(plan.read_bytes().replace(b"Written by the agent", b"Edited by hand"))
    code, said = _approve(repo, config)
    assert code != 0 and "has uncommitted edits" in said
    assert head_plan(repo)["plan"]["status"] == "pending_approval"
