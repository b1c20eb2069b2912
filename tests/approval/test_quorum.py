"""Quorum end to end with the controller on real repos (SPEC §11): votes across commits,
groups, voiding, and signed ``Plan-Approved:`` commits inside a merged pull request."""

from __future__ import annotations

from pathlib import Path

from tests.support.gitenv import commit_all, git, identity
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    approve,
    edit_status,
    head_plan,
    subjects,
    write_plan,
)
from tests.support.quorumkit import (
    CAROL,
    DAVE,
    SEC,
    keys,
    merge,
    run_once,
    submitted,
    trailer_approval,
    vote,
    voters,
)

__all__ = ["keys"]  # the fixture


def test_one_then_two_then_three_approvals_with_a_repeat_and_an_outsider(repo: Path) -> None:
    submitted(repo)
    plan = vote(repo, ALICE)
    assert plan["plan"]["status"] == "pending_approval"
    assert plan["approval"]["status"] == "partial"
    assert voters(plan) == ["alice@example.com"]
    assert plan["approval"]["missing"] == "1 more from ops, 1 from security"
    assert subjects(repo)[0] == "plangate: partial plans/greet"

    plan = vote(repo, ALICE)  # the same person again counts once
    assert plan["approval"]["status"] == "partial" and voters(plan) == ["alice@example.com"]

    plan = vote(repo, DAVE)  # an approver in neither group
    assert plan["approval"]["status"] == "refused"
    assert plan["approval"]["code"] == "E_APPROVER_NOT_ALLOWED"
    assert voters(plan) == ["alice@example.com"]  # what was collected stays
    assert plan["plan"]["status"] == "pending_approval"

    plan = vote(repo, BOB)
    assert plan["approval"]["missing"] == "1 from security"
    assert voters(plan) == ["alice@example.com", "bob@ops.example.com"]

    plan = vote(repo, SEC)
    assert plan["plan"]["status"] == "completed"
    assert plan["approval"]["status"] == "approved" and plan["approval"]["by"] == "sec@example.com"
    assert voters(plan) == ["alice@example.com", "bob@ops.example.com", "sec@example.com"]


def test_a_change_to_hashed_content_voids_the_votes(repo: Path) -> None:
    submitted(repo)
    vote(repo, ALICE)
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text().replace("who: world", "who: moon"))
    commit_all(repo, "change greet", AGENT)
    run_once(repo)  # frozen again
    plan = vote(repo, BOB)
    assert voters(plan) == ["bob@ops.example.com"]
    assert plan["approval"]["missing"] == "1 more from ops, 1 from security"


def test_a_human_cannot_forge_votes_in_the_approval_block(repo: Path) -> None:
    submitted(repo)
    vote(repo, ALICE)
    path = repo / "plans/greet/PLAN.yml"
    text = path.read_text().replace(
        "  missing:", "  - {by: sec@example.com, at: x, commit: y}\n  missing:"
    )
    assert "by: sec@example.com" in text
    path.write_text(text.replace("status: pending_approval", "status: approved", 1))
    commit_all(repo, "approve, with a vote added", BOB)
    run_once(repo)
    plan = head_plan(repo)
    assert plan["approval"]["status"] == "partial"
    assert voters(plan) == ["alice@example.com", "bob@ops.example.com"]


def test_without_a_matching_rule_one_approval_runs_as_before(repo: Path) -> None:
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    low = {"rules": [{"match": {"risk": "high", "paths": ["plans/other/**"]},
                      "require": [{"count": 2}]}]}  # fmt: skip
    run_once(repo, **low)
    approve(repo, who=ALICE)
    run_once(repo, **low)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed" and "approvals" not in plan["approval"]


# --- pull requests ----------------------------------------------------------------------


def test_a_pull_request_with_two_signed_trailer_approvals_merged_by_a_third_person(
    repo: Path, keys: dict[str, Path]
) -> None:
    submitted(repo)
    git(repo, "switch", "-q", "-c", "review")
    assert trailer_approval(repo, ALICE, keys["alice"]).returncode == 0
    done = trailer_approval(repo, SEC, keys["sec"])
    assert done.returncode == 0, done.stderr
    assert "Plan-Approved: plans/greet sha256:" in git(repo, "log", "-1", "--format=%B")
    edit_status(repo, "greet", "approved")
    commit_all(repo, "ready to merge", AGENT)
    merge(repo, "review", CAROL)
    run_once(repo, allowed_signers=str(keys["allowed"]))
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed", plan["approval"]
    assert sorted(voters(plan)) == [
        "alice@example.com",
        "carol@ops.example.com",
        "sec@example.com",
    ]


def test_unsigned_or_unknown_key_or_other_hash_trailers_never_count(
    repo: Path, keys: dict[str, Path]
) -> None:
    submitted(repo)
    git(repo, "switch", "-q", "-c", "review")
    # unsigned: the command refuses to make one without a key, so write it by hand
    plan_hash = head_plan(repo)["frozen"]["hash"]
    git(repo, "commit", "-q", "--allow-empty", "-m",
        f"approve\n\nPlan-Approved: plans/greet {plan_hash}", env=identity(*BOB))  # fmt: skip
    assert trailer_approval(repo, ("Mallory", "sec@example.com"), keys["mallory"]).returncode == 0
    git(repo, "commit", "-q", "--allow-empty", "-S", "-m",
        "approve\n\nPlan-Approved: plans/greet sha256:" + "0" * 64,
        env={**identity(*ALICE)})  # fmt: skip
    edit_status(repo, "greet", "approved")
    commit_all(repo, "ready to merge", AGENT)
    merge(repo, "review", CAROL)
    run_once(repo, allowed_signers=str(keys["allowed"]))
    plan = head_plan(repo)
    assert plan["approval"]["status"] == "partial"
    assert voters(plan) == ["carol@ops.example.com"]


def test_a_quorums_run_names_every_approver_on_every_surface(repo: Path) -> None:
    """Round 117, quorum-approvers-not-shown: a plan needing two approvals, Alice then Bob.
    The ``partial`` post named nobody, the ``start`` post, the start commit's ``Approved-By:``
    and ``status``'s ``approver`` named Bob alone. Now: the ``partial`` post's ``by`` is Alice
    (who voted); the start and outcome commits carry one ``Approved-By:`` per approver (Bob,
    whose vote met the rule, first); the start post and ``status`` name both; the fresh
    audit still calls the run valid."""
    import json

    from tests.service.test_notify import hook
    from tests.support.daemonkit import wait_until
    from tests.support.gitenv import run_cli

    both = ["bob@ops.example.com", "alice@example.com"]
    with hook() as endpoint:
        path = repo.parent / "plangate.yml"
        path.write_text(
            json.dumps(
                {
                    "repo": str(repo),
                    "approval": {
                        "approvers": ["*@example.com", "*@ops.example.com"],
                        "rules": [{"match": {"paths": ["plans/greet"]}, "require": [{"count": 2}]}],
                    },
                    "tools": {"greet": {"kind": "echo"}},
                    "notify": [endpoint.url],
                }
            )
        )
        config = ["--config", str(path)]
        write_plan(repo)
        commit_all(repo, "add greet", AGENT)
        for who in (None, ALICE, BOB):
            if who is not None:
                approve(repo, who=who)
            done = run_cli("run", "--once", *config, cwd=repo)
            assert done.returncode == 0, done.stderr[-2000:]
        wait_until(lambda: "complete" in endpoint.events(), 20, "the complete post")
    posts = {b["event"]: b for b in endpoint.bodies}
    assert posts["partial"]["by"] == "alice@example.com", posts["partial"]
    assert posts["start"]["by"] == "bob@ops.example.com" and posts["start"]["approvers"] == both
    assert all(who in posts["start"]["text"] for who in both), posts["start"]["text"]
    for event in ("start", "complete"):
        sha = git(
            repo, "log", "-1", "--format=%H", f"--grep=^plangate: {event} plans/greet$"
        ).strip()
        said = git(repo, "log", "-1", "--format=%(trailers:key=Approved-By,valueonly)", sha)
        assert said.split() == both, (event, said)
    status = run_cli("status", "--json", *config, cwd=repo)
    [row] = [r for r in json.loads(status.stdout) if r["plan"] == "plans/greet"]
    assert row["status"] == "completed" and row["approvers"] == both, row
    assert row["approver"] == "bob@ops.example.com", row  # the approval that met the policy
    table = run_cli("status", *config, cwd=repo).stdout
    assert "bob@ops.example.com, alice@example.com" in table, table
    audit = run_cli("audit", "--json", *config, cwd=repo)
    [run] = json.loads(audit.stdout)["executions"]
    assert audit.returncode == 0 and run["approval_valid"] and run["outcome"] == "complete", run


def test_one_approval_writes_one_approved_by_trailer_as_before(repo: Path) -> None:
    """Without a quorum a run's commits carry one ``Approved-By:`` as before, and ``status``
    names the one approver."""
    import json

    from tests.support.gitenv import run_cli

    path = repo.parent / "plangate.yml"
    path.write_text(
        json.dumps(
            {
                "repo": str(repo),
                "approval": {"approvers": ["alice@example.com"]},
                "tools": {"greet": {"kind": "echo"}},
            }
        )
    )
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    for who in (None, ALICE):
        if who is not None:
            approve(repo, who=who)
        assert run_cli("run", "--once", "--config", str(path), cwd=repo).returncode == 0
    for event in ("start", "complete"):
        sha = git(
            repo, "log", "-1", "--format=%H", f"--grep=^plangate: {event} plans/greet$"
        ).strip()
        said = git(repo, "log", "-1", "--format=%(trailers:key=Approved-By)", sha)
        assert said.strip() == "Approved-By: alice@example.com", (event, said)
    status = run_cli("status", "--json", "--config", str(path), cwd=repo)
    [row] = json.loads(status.stdout)
    assert (row["approver"], row["approvers"]) == ("alice@example.com", ["alice@example.com"])
