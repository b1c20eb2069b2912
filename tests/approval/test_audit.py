"""``plangate audit``: every forged case is caught from git history alone."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from controller.settings.models import default_state_dir
from tests.support.gitenv import run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOT,
    GATED,
    MALLORY,
    PLAN,
    approve,
    commit_all,
    edit_status,
    git,
    head_plan,
    run_once,
    submitted,
    write_plan,
)

CONFIG = """\
repo: repo
approval:
  approvers: ["alice@example.com", "*@ops.example.com"]
tools:
  greet: {kind: echo}
"""


def _audit(repo: Path, keep_state: bool = False) -> tuple[int, dict]:  # type: ignore[type-arg]
    (repo.parent / "plangate.yml").write_text(CONFIG)
    if not keep_state:
        shutil.rmtree(default_state_dir(repo), ignore_errors=True)  # history alone
    result = run_cli("audit", "--json", "--config", str(repo.parent / "plangate.yml"))
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def _kinds(report: dict) -> set[str]:  # type: ignore[type-arg]
    return {f["kind"] for f in report["findings"]}


def test_clean_history_passes(repo: Path) -> None:
    submitted(repo)
    approve(repo)
    run_once(repo)
    code, report = _audit(repo)
    assert code == 0, report
    [execution] = report["executions"]
    assert execution["approval_valid"] and execution["hash_ok"]
    assert execution["approver"] == "alice@example.com" and execution["outcome"] == "complete"


def test_human_writing_completed_is_flagged(repo: Path) -> None:
    submitted(repo)
    edit_status(repo, "greet", "completed")
    commit_all(repo, "done, trust me", AGENT)
    code, report = _audit(repo)
    assert code == 1 and "illegal" in _kinds(report)


#: A seal of the controller's shape (``Controller-Seal:``, 64 hex digits) that no key here made:
#: a fresh clone cannot verify it and judges the start by its approval (an unsealed one is no
#: controller's at all, round 69).
SEAL = "Controller-Seal: " + "5e" * 32 + "\n"


def _forge_start(repo: Path, approver: tuple[str, str]) -> None:
    """Someone commits a start as the controller identity after a bad approval (sealed: by
    git alone the audit judges it by its approval)."""
    sha = approve(repo, who=approver)
    edit_status(repo, "greet", "executing")
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text() + "approval: {status: approved, by: x}\n")
    git(repo, "add", "-A")
    message = f"plangate: start plans/greet\n\nPlan: plans/greet\nApproval-Commit: {sha}\n{SEAL}"
    git(
        repo,
        "commit",
        "-q",
        "-m",
        message,
        env={
            "GIT_AUTHOR_NAME": "plangate",
            "GIT_AUTHOR_EMAIL": "plangate@localhost",
            "GIT_COMMITTER_NAME": "plangate",
            "GIT_COMMITTER_EMAIL": "plangate@localhost",
        },
    )


def test_start_without_valid_approval_is_flagged(repo: Path) -> None:
    submitted(repo)
    _forge_start(repo, MALLORY)
    code, report = _audit(repo)
    assert code == 1 and "start-without-approval" in _kinds(report)
    assert report["executions"][0]["code"] == "E_APPROVER_NOT_ALLOWED"


def test_self_approval_forged_start_is_flagged(repo: Path) -> None:
    submitted(repo, who=ALICE)
    _forge_start(repo, ALICE)
    code, report = _audit(repo)
    assert code == 1
    assert report["executions"][0]["code"] == "E_SELF_APPROVAL"


def test_human_edit_of_execution_block_and_log_is_flagged(repo: Path) -> None:
    submitted(repo)
    approve(repo)
    run_once(repo)
    log = repo / "plans/greet/EXECUTION_LOG.md"
    log.write_text(log.read_text() + "\nall good, really\n")
    commit_all(repo, "touch up the log", AGENT)
    code, report = _audit(repo)
    assert code == 1 and "log-changed" in _kinds(report)


@pytest.mark.parametrize("how", ["rm", "mv"])
def test_a_log_removed_with_its_plan_ends_a_life(repo: Path, how: str) -> None:
    """Round 63: a finished folder emptied (or moved away) for a recurring plan removes its
    log with its plan: no change of the controller's record (docs/operations.md)."""
    submitted(repo)
    approve(repo)
    run_once(repo)
    if how == "rm":
        git(repo, "rm", "-rq", "plans/greet")
    else:
        git(repo, "mv", "plans/greet", "archive-greet")
    commit_all(repo, "greet: done for this week", AGENT)
    _code, report = _audit(repo)
    assert "log-changed" not in _kinds(report), report


def test_a_log_removed_while_the_plan_stays_is_flagged(repo: Path) -> None:
    submitted(repo)
    approve(repo)
    run_once(repo)
    git(repo, "rm", "-q", "plans/greet/EXECUTION_LOG.md")
    commit_all(repo, "drop the log", AGENT)
    code, report = _audit(repo)
    assert code == 1 and "log-changed" in _kinds(report)


@pytest.mark.parametrize("verb", ["complete", "abort"])
def test_outcome_without_start_is_flagged(repo: Path, verb: str) -> None:
    """Also an abort: the controller records one without a start only for a plan withdrawn
    before it ran (round 10), never for a plan nobody withdrew."""
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    edit_status(repo, "greet", {"complete": "completed", "abort": "aborted"}[verb])
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-q",
        "-m",
        f"plangate: {verb} plans/greet",
        env={
            "GIT_AUTHOR_NAME": "plangate",
            "GIT_AUTHOR_EMAIL": "plangate@localhost",
            "GIT_COMMITTER_NAME": "plangate",
            "GIT_COMMITTER_EMAIL": "plangate@localhost",
        },
    )
    code, report = _audit(repo)
    # an abort no one asked for (round 65), an outcome of a plan never started (round 66),
    # is not the controller's: anyone's commit under its name
    assert code == 1 and "controller-unexplained" in _kinds(report), report["findings"]


@pytest.mark.parametrize(
    "ref", ["${inputs.who}", "hi ${plan.name}", "${plan.hash}", "${approval.approved_by}"]
)
def test_the_controllers_freeze_of_legacy_references_is_no_finding(repo: Path, ref: str) -> None:
    """Round 59: the freeze rewrote ``${...}`` to ``$<...>`` as documented, yet the audit
    compared the raw texts' hashes and flagged it ``controller-unexplained``."""
    text = PLAN.replace("world   # trailing comment", f'"{ref}"')
    text = text.replace("actions:", 'inputs:\n  who: "world"\nactions:', 1)
    write_plan(repo, "greet", text)
    commit_all(repo, "add greet", AGENT)
    run_once(repo)
    assert "$<" in (repo / "plans" / "greet" / "PLAN.yml").read_text()
    approve(repo)
    run_once(repo)
    code, report = _audit(repo)
    assert "controller-unexplained" not in _kinds(report), report["findings"]
    assert code == 0 and report["executions"][0]["approval_valid"], report


def _paused_at_the_gate(repo: Path) -> None:
    write_plan(repo, "greet", GATED)
    commit_all(repo, "add greet", AGENT)
    run_once(repo)  # frozen
    approve(repo)
    run_once(repo)  # action 1, then the gate
    assert head_plan(repo)["plan"]["status"] == "awaiting_approval"


@pytest.mark.parametrize("keep_state", [False, True], ids=["git-alone", "with-state"])
def test_a_forged_abort_under_the_controllers_name_is_unexplained(
    repo: Path, keep_state: bool
) -> None:
    """Round 65: a well-shaped ``plangate: abort`` (``Aborted-By: alice``) under the
    controller's name, author and committer, on a plan paused at its gate: the controller
    ignores it and runs the gate on her approval. The audit flags the forged commit and
    lists her run as the controller recorded it: with its state by its record of its
    commits, from git alone because no abort request (an allowed aborter's own commit)
    precedes it; neither her gate approval nor the controller's start is blamed."""
    _paused_at_the_gate(repo)
    edit_status(repo, "greet", "aborted")
    forged = commit_all(
        repo,
        "plangate: abort plans/greet\n\nPlan: plans/greet\nPlan-Status: aborted\n"
        "Aborted-By: alice@example.com\n",
        BOT,
    )
    approve(repo)  # her gate approval
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"
    code, report = _audit(repo, keep_state)
    assert code == 1
    assert {(f["commit"], f["kind"]) for f in report["findings"]} >= {
        (forged, "controller-unexplained")
    }, report["findings"]
    assert all(f["commit"] == forged for f in report["findings"]), report["findings"]
    runs = report["executions"]
    assert [(e["outcome"], e["approval_valid"]) for e in runs] == [
        ("await-approval", True),
        ("complete", True),
    ], runs
    assert not any(e["aborted_by"] for e in runs), runs


def test_her_abort_of_a_paused_plan_is_the_controllers_record(repo: Path) -> None:
    """The control: Alice aborts the paused plan herself; the controller's abort commit
    answers her request and the audit lists the run aborted by her, with no finding."""
    _paused_at_the_gate(repo)
    edit_status(repo, "greet", "aborted")
    commit_all(repo, "abort greet", ALICE)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "aborted"
    for keep_state in (True, False):
        code, report = _audit(repo, keep_state)
        assert code == 0, report["findings"]
        last = report["executions"][-1]
        assert (last["outcome"], last["aborted_by"]) == ("abort", "alice@example.com"), last


def test_a_commit_under_its_name_not_in_its_record_is_unexplained(repo: Path) -> None:
    """With its state directory, the audit knows the controller's commits by its record
    (``<state_dir>/commits``), as the controller does: a well-shaped abort under its name
    after her real request, which git alone cannot tell from the controller's, is flagged;
    the controller's own abort that follows is the record."""
    _paused_at_the_gate(repo)
    edit_status(repo, "greet", "aborted")
    commit_all(repo, "abort greet", ALICE)
    path = repo / "plans" / "greet" / "PLAN.yml"
    path.write_text(path.read_text() + "# aborted on request\n")  # a change the log lists
    forged = commit_all(
        repo,
        "plangate: abort plans/greet\n\nPlan: plans/greet\nPlan-Status: aborted\n"
        "Aborted-By: alice@example.com\n",
        BOT,
    )
    run_once(repo)
    code, report = _audit(repo, keep_state=True)
    assert code == 1
    assert [(f["commit"], f["kind"]) for f in report["findings"]] == [
        (forged, "controller-unexplained")
    ], report["findings"]
    assert "record" in report["findings"][0]["detail"]


def test_an_executable_plan_file_keeps_its_mode_and_a_changed_mode_is_unexplained(
    repo: Path,
) -> None:
    """Round 87 (modeflip): the agent's PLAN.yml committed ``100755`` stays ``100755``
    through the controller's freeze, start and outcome (``git status`` clean), so Alice's
    plain status edit is an approval and the run is valid to the audit, without finding. A
    commit under the controller's name that changes the mode (a hash-neutral comment beside
    it) is one it did not make: ``controller-unexplained``."""
    plan = write_plan(repo)
    os.chmod(plan, 0o755)
    commit_all(repo, "add greet", AGENT)
    run_once(repo)  # frozen
    assert git(repo, "status", "--porcelain") == ""
    approve(repo)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"
    assert git(repo, "ls-tree", "HEAD", "plans/greet/PLAN.yml").split()[0] == "100755"
    assert "mode change" not in git(repo, "log", "--summary", "--format=", "--", "plans")
    assert git(repo, "status", "--porcelain") == ""
    write_plan(repo, "other")
    os.chmod(repo / "plans/other/PLAN.yml", 0o755)
    commit_all(repo, "add other", AGENT)
    run_once(repo)  # frozen, 100755 kept
    code, report = _audit(repo, keep_state=True)
    assert code == 0 and report["executions"][0]["approval_valid"], report
    os.chmod(repo / "plans/other/PLAN.yml", 0o644)
    with (repo / "plans/other/PLAN.yml").open("a") as handle:
        handle.write("# tidied\n")
    # seal-shaped (git alone cannot verify a seal): judged by what it changed; an unsealed
    # one is anyone's once the branch holds sealed controller commits (round 95, ``mx``)
    forged = commit_all(
        repo,
        "plangate: freeze plans/other\n\nPlan: plans/other\nPlan-Status: pending_approval\n"
        f"Controller-Seal: {'ab' * 32}\n",
        BOT,
    )
    code, report = _audit(repo)
    found = [f for f in report["findings"] if f["commit"] == forged]
    assert report["executions"][0]["approval_valid"], report
    assert code == 1 and [f["kind"] for f in found] == ["controller-unexplained"], report
    assert "changed the mode of plans/other/PLAN.yml (100755 -> 100644)" in found[0]["detail"]
