"""A person's group and approver-list membership is the union over every address they are
known by (round 129's ``alias-address-not-matched-against-groups``): ``a.smith@corp.example``,
Alice's alias (``identity_aliases.people``), listed in ``sec``, makes Alice a member of
``sec`` under either address, for the controller, ``status`` and the fresh-clone audit alike;
she still counts once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controller.approval.approvals import approver_allowed
from controller.approval.policy import Need, tally
from controller.settings import ApprovalSettings, IdentityAliases, Requirement
from tests.support.gitenv import commit_all, git, run_cli
from tests.support.gitkit import AGENT, approve, head_plan, write_plan
from tests.support.plantext import greet_plan

ALICE = ("Alice", "alice@example.com")
SMITH = ("A. Smith", "a.smith@corp.example")  # Alice's other address
BOB = ("Bob", "bob@example.com")
OPSY = ("Opsy", "opsy@example.com")  # ops only, like Bob
CAROL = ("Carol", "carol@example.com")

APPROVAL: dict[str, Any] = {
    "approvers": ["alice@example.com", "a.smith@corp.example", "bob@example.com",
                  "opsy@example.com", "carol@example.com"],
    "groups": {"ops": ["alice@example.com", "bob@example.com", "opsy@example.com"],
               "sec": ["a.smith@corp.example", "carol+x@example.com"]},
    "rules": [{"match": {"risk": "high"}, "require": [{"group": "ops"}, {"group": "sec"}]}],
    "identity_aliases": {"plus_tags": ["*@example.com"],
                         "people": [["alice@example.com", "a.smith@corp.example"]]},
}  # fmt: skip
NEED = Need(0, (Requirement(group="ops", count=1), Requirement(group="sec", count=1)))


def _met(*who: str) -> bool:
    return tally(who, NEED, ApprovalSettings.model_validate(APPROVAL)).met


def test_an_alias_listed_in_a_group_fills_it_under_either_address_and_counts_once() -> None:
    assert _met("a.smith@corp.example", "bob@example.com")  # alsecC, alsecC2
    assert _met("bob@example.com", "a.smith@corp.example")
    assert _met("alice@example.com", "bob@example.com")  # alsecA: the same person
    assert _met("alice+ci@example.com", "bob@example.com")  # her plus tag too
    assert not _met("alice@example.com", "a.smith@corp.example")  # one person, one slot
    assert not _met("opsy@example.com", "bob@example.com")  # two of ops fill no sec
    assert _met("carol@example.com", "bob@example.com")  # sec lists carol+x@: Carol


def test_membership_is_every_spelling_of_the_person_and_a_glob_is_matched_as_written() -> None:
    from controller.approval.approvals import spellings

    aliases = IdentityAliases.model_validate(APPROVAL["identity_aliases"])
    assert approver_allowed("alice@example.com", ["a.smith@corp.example"], aliases)
    assert spellings("Alice+q@Example.com", aliases) == {
        "alice+q@example.com",
        "alice@example.com",
        "a.smith@corp.example",
    }
    assert approver_allowed("alice@example.com", ["a.smith@corp.example"], aliases)
    assert approver_allowed("alice@example.com", ["*@corp.example"], aliases)
    assert approver_allowed("a.smith@corp.example", ["alice@example.com"], aliases)
    assert not approver_allowed("bob@example.com", ["a.smith@corp.example"], aliases)
    # a glob is no address: `*+ci@` names tagged addresses, never every untagged one
    assert not approver_allowed("bob@example.com", ["*+ci@example.com"], aliases)
    assert approver_allowed("bob+ci@example.com", ["*+ci@example.com"], aliases)


TOOL_PLAN = greet_plan("High", "a high-risk call", "x").replace("greet", "hrec")


def _config(repo: Path) -> Path:
    path = repo.parent / "plangate.yml"
    data = {
        "repo": str(repo),
        "state_dir": str(repo.parent / "state"),
        "approval": APPROVAL,
        "tools": {"hrec": {"kind": "echo", "risk": "high"}},
    }
    path.write_text(json.dumps(data))
    return path


def _run(config: Path) -> None:
    done = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]


def _row(config: Path, repo: Path) -> dict[str, Any]:
    out = run_cli("status", "--json", "--config", str(config), cwd=repo)
    [row] = [r for r in json.loads(out.stdout) if r["plan"] == "plans/sec"]
    return dict(row)


def test_alias_in_sec_and_bob_run_a_high_risk_plan_and_the_fresh_audit_agrees(
    repo: Path, tmp_path: Path
) -> None:
    config = _config(repo)
    write_plan(repo, "sec", TOOL_PLAN)
    commit_all(repo, "add sec", AGENT)
    _run(config)
    approve(repo, "sec", who=SMITH)
    _run(config)
    assert _row(config, repo)["status"] == "pending_approval"  # one of two
    approve(repo, "sec", who=BOB)
    _run(config)
    plan = head_plan(repo, "sec")
    assert plan["plan"]["status"] == "completed", plan
    assert _row(config, repo)["status"] == "completed"
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))  # no config: the recorded policy
    out = run_cli("audit", "--json", cwd=clone)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    [run] = json.loads(out.stdout)["executions"]
    assert run["approval_valid"] and run["plan"] == "plans/sec", run


def test_alice_under_her_own_address_fills_sec_through_her_alias(repo: Path) -> None:
    config = _config(repo)
    write_plan(repo, "sec", TOOL_PLAN)
    commit_all(repo, "add sec", AGENT)
    _run(config)
    approve(repo, "sec", who=ALICE)
    _run(config)
    approve(repo, "sec", who=OPSY)
    _run(config)
    assert head_plan(repo, "sec")["plan"]["status"] == "completed"
    row = _row(config, repo)
    assert row["status"] == "completed", row


def test_check_of_bobs_branch_after_the_alias_says_it_starts(repo: Path) -> None:
    """``plangate check`` of Bob's approving branch, a.smith's vote counted on main: the
    merge meets the rule (it said "1 from sec" was missing)."""
    config = _config(repo)
    write_plan(repo, "sec", TOOL_PLAN)
    commit_all(repo, "add sec", AGENT)
    _run(config)
    approve(repo, "sec", who=SMITH)
    _run(config)
    git(repo, "switch", "-q", "-c", "bob")
    approve(repo, "sec", who=BOB)
    git(repo, "switch", "-q", "main")
    told = run_cli(
        "check", "--config", str(config), "--base", "main", "--head", "bob",
        "--as", BOB[1], "--format", "json", cwd=repo,
    )  # fmt: skip
    [report] = [p for p in json.loads(told.stdout)["plans"] if p["plan"] == "plans/sec"]
    assert report["outcome"] == "start" and not report["missing"], report
