"""``plangate audit``: a second start of one frozen hash is a finding (round 50, issue 11).

A frozen hash runs at most once (SPEC §15): the controller refuses an approval of a version
whose start commit is on the branch (``E_ALREADY_EXECUTED``, read from history, not only
from its state directory). A history where a copy of a version started again anyway (a
controller with a new state directory before round 50, or a start forged under its name) is
flagged ``started-twice``, the second start is not valid, and the audit exits 1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from controller.settings.models import default_state_dir
from tests.support.gitenv import run_cli
from tests.support.gitkit import (
    ALICE,
    BOT,
    GATED,
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

CONTROLLER = {
    "GIT_AUTHOR_NAME": "plangate",
    "GIT_AUTHOR_EMAIL": "plangate@localhost",
    "GIT_COMMITTER_NAME": "plangate",
    "GIT_COMMITTER_EMAIL": "plangate@localhost",
}


def _audit(repo: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    (repo.parent / "plangate.yml").write_text(CONFIG)
    shutil.rmtree(default_state_dir(repo), ignore_errors=True)  # history alone
    result = run_cli("audit", "--json", "--config", str(repo.parent / "plangate.yml"))
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


#: A seal of the controller's shape that no key here made: a fresh clone cannot verify it.
SEAL = "Controller-Seal: " + "5e" * 32 + "\n"


def _start_copy_again(repo: Path, seal: str = SEAL) -> str:
    """``plans/greet`` ran; the same version in ``plans/copy`` is approved by Alice and a
    start commit under the controller's name starts it (what a controller with a new state
    directory did before round 50: it seals its commits with its own key)."""
    submitted(repo)
    approve(repo)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"
    submitted(repo, "copy")
    assert head_plan(repo, "copy")["frozen"]["hash"] == head_plan(repo)["frozen"]["hash"]
    sha = approve(repo, "copy", ALICE)
    edit_status(repo, "copy", "executing")
    git(repo, "add", "-A")
    message = f"plangate: start plans/copy\n\nPlan: plans/copy\nApproval-Commit: {sha}\n{seal}"
    git(repo, "commit", "-q", "-m", message, env=CONTROLLER)
    return str(head_plan(repo)["frozen"]["hash"])


def test_a_second_start_of_one_frozen_hash_is_flagged(repo: Path) -> None:
    plan_hash = _start_copy_again(repo)
    code, report = _audit(repo)
    assert code == 1, report
    twice = [f for f in report["findings"] if f["kind"] == "started-twice"]
    assert [f["plan"] for f in twice] == ["plans/copy"], report["findings"]
    assert plan_hash in twice[0]["detail"] and "plans/greet (start " in twice[0]["detail"]
    runs = {e["plan"]: e for e in report["executions"]}
    assert runs["plans/greet"]["approval_valid"], runs["plans/greet"]  # the first run stands
    assert not runs["plans/copy"]["approval_valid"], runs["plans/copy"]
    assert runs["plans/copy"]["code"] == "E_ALREADY_EXECUTED", runs["plans/copy"]


def test_the_text_report_names_the_finding(repo: Path) -> None:
    _start_copy_again(repo)
    (repo.parent / "plangate.yml").write_text(CONFIG)
    shutil.rmtree(default_state_dir(repo), ignore_errors=True)
    result = run_cli("audit", "--config", str(repo.parent / "plangate.yml"))
    assert result.returncode == 1, result.stdout
    assert "started-twice" in result.stdout, result.stdout


def test_one_run_with_a_gate_is_not_started_twice(repo: Path) -> None:
    """A gate's approval continues the run (its start commit says ``start`` again, of the
    same hash): not a second run."""
    write_plan(repo, "greet", GATED)
    commit_all(repo, "add gated")
    run_once(repo)
    approve(repo)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "awaiting_approval", head_plan(repo)["plan"]
    approve(repo)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed", head_plan(repo)["plan"]
    code, report = _audit(repo)
    assert code == 0, report["findings"]
    assert not [f for f in report["findings"] if f["kind"] == "started-twice"]


def test_an_unsealed_second_start_is_no_run(repo: Path) -> None:
    """Round 69: the same start with no ``Controller-Seal:`` is no controller's (every
    controller commit is sealed): the audit flags the commit, not a second run."""
    _start_copy_again(repo, seal="")
    code, report = _audit(repo)
    assert code == 1
    kinds = {(f["plan"], f["kind"]) for f in report["findings"]}
    assert ("plans/copy", "controller-unexplained") in kinds, kinds
    assert not any(kind == "started-twice" for _, kind in kinds), kinds
    assert [e["plan"] for e in report["executions"]] == ["plans/greet"], report["executions"]


def test_an_unsealed_forged_start_leaves_the_real_run_valid(repo: Path) -> None:
    """Round 69's ``audit-clone``: the agent's unsealed start of a pending plan under the
    controller's name, then Alice's approval: the controller runs the plan once, and the
    audit by git alone lists that run valid, once, flagging only the forged commit (it read
    the forgery as the run: her approval ``illegal``, the real start ``started-twice``)."""
    submitted(repo)
    edit_status(repo, "greet", "executing")
    plan_hash = head_plan(repo)["frozen"]["hash"]
    forged = commit_all(
        repo,
        f"plangate: start plans/greet\n\nPlan: plans/greet\nPlan-Hash: {plan_hash}\n"
        "Plan-Status: executing\nController: host/3f2a9c1b\n",
        BOT,
    )
    approve(repo)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"
    code, report = _audit(repo)
    assert code == 1
    assert {(f["commit"], f["kind"]) for f in report["findings"]} == {
        (forged, "controller-unexplained"),
        (forged, "illegal"),  # its `executing`, read as anyone's status change
    }, report["findings"]
    [run] = report["executions"]
    assert (run["approval_valid"], run["approver"], run["outcome"]) == (
        True,
        "alice@example.com",
        "complete",
    ), run


def test_a_second_outcome_that_changes_no_file_is_flagged(repo: Path) -> None:
    """Round 94 (heiroutcome): a second ``complete`` of one run, its files the same bytes as
    the first's (two heirs replayed one refused outcome), changes no file: the path-limited
    log never read it, and the audit found nothing. Now it is read, and flagged."""
    submitted(repo)
    approve(repo)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"
    first = git(repo, "log", "-1", "--format=%H", "--grep=plangate: complete").strip()
    message = git(repo, "log", "-1", "--format=%B", first)
    git(repo, "commit", "-q", "--allow-empty", "-m", message, env=CONTROLLER)
    code, report = _audit(repo)
    assert code == 1, report
    kinds = {(f["plan"], f["kind"]) for f in report["findings"]}
    assert {plan for plan, _ in kinds} == {"plans/greet"}, kinds
    runs = [e for e in report["executions"] if e["plan"] == "plans/greet"]
    assert [e["outcome"] for e in runs] == ["complete"], runs
