"""``plangate approve`` under ``ident`` and ``working-tree-encoding`` (git built-ins, applied
as git applies them; round 76): the checkout ``git status`` calls clean is no uncommitted
edit, and the file written back is what git would check out, leaving ``git status`` clean
(before: refused ``E_USAGE`` "has uncommitted edits", which no commit or discard removed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitenv import AGENT, ALICE, commit_all, git, identity, run_cli
from tests.support.gitkit import PLAN, head_plan, write_plan

CASES = {
    "ident": ("# $Id$\n" + PLAN).encode("utf-8"),
    "working-tree-encoding=ISO-8859-1": PLAN.replace("Say hello", "Say café").encode("latin-1"),
}


def _frozen(repo: Path, tmp_path: Path, attr: str) -> tuple[Path, Path]:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    plan = write_plan(repo)
    plan.write_bytes(CASES[attr])
    (repo / ".gitattributes").write_text(f"plans/*/PLAN.yml {attr}\n")
    commit_all(repo, "agent writes a plan")
    plan.unlink()
    git(repo, "checkout", "-q", "--", ".")
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    assert head_plan(repo)["frozen"]["hash"]
    assert git(repo, "status", "--porcelain") == ""
    return config, plan


def _approve(repo: Path, config: Path) -> tuple[int, str]:
    done = run_cli("approve", "plans/greet", "--config", str(config), cwd=repo,
                   env=identity(*ALICE))  # fmt: skip
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("attr", list(CASES))
def test_approve_a_checkout_git_calls_clean(repo: Path, tmp_path: Path, attr: str) -> None:
    config, plan = _frozen(repo, tmp_path, attr)
    code, said = _approve(repo, config)
    assert code == 0, said
    assert head_plan(repo)["plan"]["status"] == "approved"
    assert git(repo, "status", "--porcelain") == ""
    written = plan.read_bytes()
    plan.unlink()
    git(repo, "checkout", "-q", "--", ".")
    assert written == plan.read_bytes()  # what git checks out for the new blob


@pytest.mark.parametrize("attr", list(CASES))
def test_an_edit_under_the_attribute_is_still_refused(
    repo: Path, tmp_path: Path, attr: str
) -> None:
    config, plan = _frozen(repo, tmp_path, attr)
    plan.write_bytes(plan.read_bytes().replace(b"Written by the agent", b"Edited by hand"))
    code, said = _approve(repo, config)
    assert code != 0 and "has uncommitted edits" in said
    assert head_plan(repo)["plan"]["status"] == "pending_approval"


def test_an_encoding_it_cannot_apply_is_refused_with_its_code(repo: Path, tmp_path: Path) -> None:
    config, plan = _frozen(repo, tmp_path, "ident")
    (repo / ".gitattributes").write_text("plans/*/PLAN.yml working-tree-encoding=X-NO-SUCH\n")
    git(repo, "add", ".gitattributes")  # git itself cannot store the plan under it
    git(repo, "commit", "-qm", "agent names an encoding nobody knows", env=identity(*AGENT))
    plan.write_bytes(plan.read_bytes() + b"# more\n")
    code, said = _approve(repo, config)
    assert code != 0 and "E_ATTRIBUTE_UNSUPPORTED" in said, said
    assert "remove the working-tree-encoding attribute" in said
    assert head_plan(repo)["plan"]["status"] == "pending_approval"
