"""A version withdrawn under the plans folder the controller read before a ``plans_dir``
change stays withdrawn for a controller that rebuilds its history index without the memory
of the old one (a new state directory): its cold scan reads the versions withdrawn under
every plans folder its records name, up to the record that replaced it, as ``check`` does
(round 128, ``mov:check``). Real repos, the real ``plangate run --once``."""

from __future__ import annotations

from pathlib import Path

from tests.approval.test_prerecord_policy import PLAN, run, write_config
from tests.support.gitenv import AGENT, ALICE, BOB, commit_all, git, run_cli
from tests.support.gitkit import edit_status, head_plan, write_plan


def test_a_new_state_directory_after_a_move_keeps_a_version_withdrawn_before_it(
    repo: Path,
) -> None:
    write_plan(repo, "r1")
    commit_all(repo, "add r1", AGENT)
    edit_status(repo, "r1", "rejected")
    commit_all(repo, "reject r1", BOB)
    run(write_config(repo, [ALICE[1], "*@ops.example.com"]))
    assert head_plan(repo, "r1")["plan"]["status"] == "rejected"
    (repo / "ops" / "r1c").mkdir(parents=True)
    (repo / "ops" / "r1c" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "a copy of r1", AGENT)
    config = write_config(repo, [ALICE[1]], "plans_dir: ops\n")
    config.write_text(config.read_text().replace("/state\n", "/state2\n"))
    assert "/state2\n" in config.read_text()
    # a new state directory (the old one lost): the index is built from git alone
    taken = run_cli("run", "--once", "--take-over", "--config", str(config), timeout=120)
    assert taken.returncode == 0, taken.stderr[-2000:]
    path = repo / "ops" / "r1c" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve r1c", ALICE)
    run(config)
    text = git(repo, "show", "HEAD:ops/r1c/PLAN.yml")
    assert "E_VERSION_WITHDRAWN" in text and "status: completed" not in text, text
