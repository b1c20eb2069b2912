"""A rejection or an abort that a commit on a merged branch made is that commit's, judged by
the withdrawal rule as its maker's, whatever the merge resolved the status to (round 120,
merged-rejection-charged-to-merger). Mallory's ``rejected`` on her branch, merged
``git merge --no-ff`` by Bob, was Bob's rejection: the plan withdrawn for good, its version
vetoed, the audit listing the decision as Bob's; Mallory's ``aborted`` of a run paused at its
gate, merged by Bob, aborted the run; and Alice's rejection merged by the agent was flagged as
the agent's ignored withdrawal beside her counted one. Only a status the merge commit itself
writes that no merged commit made (a ``--no-commit`` edit, a conflict resolved by hand) is the
merger's. Approvals differ on purpose: an approval a merge brings is the merger's (the merge of
a pull request approves). The controller, a fresh clone's ``plangate audit`` and ``plangate
check --as`` read the one history index, so they agree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from controller.settings.models import default_state_dir
from tests.support.gitenv import commit_all, git, identity, run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    GATED,
    MALLORY,
    PLAN,
    edit_status,
    head_plan,
    status_row,
    subjects,
    write_plan,
)

DRAFT = PLAN.replace("status: pending_approval", "status: draft")
CONFIG = """\
repo: repo
approval:
  approvers: ["alice@example.com", "*@ops.example.com"]
tools:
  greet: {kind: echo}
"""


def _row(repo: Path, slug: str = "greet") -> dict[str, Any]:
    return status_row(repo, slug)


def _set(repo: Path, status: str, who: tuple[str, str], slug: str = "greet") -> str:
    edit_status(repo, slug, status)
    return commit_all(repo, f"{who[0]}: {status} {slug}", who)


def _merge(repo: Path, branch: str, who: tuple[str, str], *extra: str) -> None:
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", *extra, "-m", f"merge {branch}", branch, env=identity(*who))


def _on_branch(repo: Path, status: str, who: tuple[str, str], branch: str = "side") -> str:
    """``who`` sets ``status`` on a branch forked from main; back on main."""
    git(repo, "checkout", "-q", "-b", branch, "main")
    sha = _set(repo, status, who)
    git(repo, "checkout", "-q", "main")
    return sha


def _audit(repo: Path) -> dict[str, Any]:
    """``plangate audit --json`` of a fresh clone: git history alone."""
    clone = repo.parent / "clone" / "repo"
    shutil.rmtree(clone.parent, ignore_errors=True)
    clone.parent.mkdir()
    git(repo, "clone", "-q", str(repo), str(clone))
    (clone.parent / "plangate.yml").write_text(CONFIG)
    shutil.rmtree(default_state_dir(clone), ignore_errors=True)
    result = run_cli("audit", "--json", "--config", str(clone.parent / "plangate.yml"))
    assert result.returncode in (0, 1), result.stderr
    return dict(json.loads(result.stdout))


def _flags(report: dict[str, Any], slug: str = "greet") -> list[str]:
    return [
        str(f.get("detail"))
        for f in report.get("findings", [])
        if f.get("plan") == f"plans/{slug}" and f.get("kind") == "withdraw-not-allowed"
    ]


def _decisions(report: dict[str, Any], slug: str = "greet") -> list[tuple[Any, Any]]:
    return [
        (d.get("kind"), d.get("by"))
        for d in report.get("decisions", [])
        if d.get("plan") == f"plans/{slug}"
    ]


def _starts(repo: Path, slug: str = "greet") -> list[str]:
    return [s for s in subjects(repo) if s.startswith(f"plangate: start plans/{slug}")]


@pytest.mark.parametrize(
    ("text", "merger"),
    [(DRAFT, BOB), (PLAN, BOB), (DRAFT, ALICE)],
    ids=["draft-bob", "pending-bob", "draft-alice"],
)
def test_a_strangers_rejection_merged_by_an_approver_is_hers_and_ignored(
    repo: Path, text: str, merger: tuple[str, str]
) -> None:
    """Mallory rejects on her branch; an approver merges it ``--no-ff``: ignored and
    reported as Mallory's (not the merger's), the plan where it was; submitted and approved
    by Bob, it runs, and the fresh-clone audit calls the run valid and flags Mallory."""
    write_plan(repo, text=text)
    commit_all(repo, "agent: a plan", AGENT)
    status = str(_row(repo).get("status"))
    assert status in ("draft", "pending_approval")
    _on_branch(repo, "rejected", MALLORY)
    _merge(repo, "side", merger)
    row = _row(repo)
    assert row.get("status") == status, row
    notes = json.dumps(row.get("notes"))
    assert f"E_APPROVER_NOT_ALLOWED: {MALLORY[1]} set status rejected" in notes, row
    assert f"{merger[1]} set status rejected" not in notes, row
    if status == "draft":
        _set(repo, "pending_approval", AGENT)
        assert _row(repo).get("status") == "pending_approval"
    _set(repo, "approved", BOB)
    assert _row(repo).get("status") == "completed"
    report = _audit(repo)
    flags = _flags(report)
    assert flags and all(MALLORY[1] in f and merger[1] not in f for f in flags), flags
    assert not [d for d in _decisions(report) if d[0] == "reject"], _decisions(report)
    valid = [
        e
        for e in report.get("executions", [])
        if e.get("plan") == "plans/greet" and e.get("approval_valid")
    ]
    assert len(valid) == 1, report.get("executions")


def test_an_approvers_rejection_merged_by_the_author_is_hers_and_flags_nobody(
    repo: Path,
) -> None:
    """Alice rejects the agent's draft on her branch; the agent merges it ``--no-ff``: the
    plan is rejected by Alice, and nobody is flagged (the agent's merge is no withdrawal of
    its own, ignored or counted)."""
    write_plan(repo, text=DRAFT)
    commit_all(repo, "agent: a draft", AGENT)
    _row(repo)
    _on_branch(repo, "rejected", ALICE)
    _merge(repo, "side", AGENT)
    row = _row(repo)
    assert row.get("status") == "rejected", row
    assert "E_APPROVER_NOT_ALLOWED" not in json.dumps(row), row
    _set(repo, "pending_approval", AGENT)
    _set(repo, "approved", BOB)
    assert _row(repo).get("status") == "rejected"
    assert not _starts(repo)
    report = _audit(repo)
    assert _decisions(report) == [("reject", ALICE[1])], report.get("decisions")
    assert not _flags(report), _flags(report)


def test_a_pull_request_adding_a_plan_a_stranger_rejected_brings_the_draft(
    repo: Path,
) -> None:
    """The agent's pull request adds a draft, Mallory sets it rejected there, Bob merges it
    ``--no-ff``: the merge brings the draft (her rejection ignored as hers), not a plan with
    no status "rejected by bob ... (from nothing)"."""
    git(repo, "checkout", "-q", "-b", "pr", "main")
    write_plan(repo, text=DRAFT)
    commit_all(repo, "agent: a draft", AGENT)
    _set(repo, "rejected", MALLORY)
    _merge(repo, "pr", BOB)
    row = _row(repo)
    assert row.get("status") == "draft", row
    notes = json.dumps(row.get("notes"))
    assert f"E_APPROVER_NOT_ALLOWED: {MALLORY[1]}" in notes, row
    assert "E_ILLEGAL_TRANSITION" not in notes, row


def test_a_strangers_abort_of_a_paused_run_merged_by_an_approver_is_ignored(
    repo: Path,
) -> None:
    """The run pauses at its gate; Mallory sets ``aborted`` on her branch and Bob merges it:
    no abort is requested (it was "abort requested by bob"); Bob's gate approval runs the
    gated action."""
    write_plan(repo, text=GATED)
    commit_all(repo, "agent: a gated plan", AGENT)
    _row(repo)  # frozen
    _set(repo, "approved", ALICE)
    assert _row(repo).get("status") == "awaiting_approval"
    _on_branch(repo, "aborted", MALLORY)
    _merge(repo, "side", BOB)
    row = _row(repo)
    assert row.get("status") == "awaiting_approval", row
    assert f"E_APPROVER_NOT_ALLOWED: {MALLORY[1]} set status aborted" in json.dumps(row), row
    _set(repo, "approved", BOB)
    assert _row(repo).get("status") == "completed"
    done = [a["id"] for a in head_plan(repo)["execution"]["actions"] if a["status"] == "succeeded"]
    assert done == [1, 2], head_plan(repo)["execution"]
    assert _flags(_audit(repo))


@pytest.mark.parametrize(
    ("merger", "counts"), [(BOB, True), (MALLORY, False)], ids=["bob", "mallory"]
)
def test_a_rejection_the_merge_itself_writes_is_the_mergers(
    repo: Path, merger: tuple[str, str], counts: bool
) -> None:
    """No merged commit set the status: the merger wrote ``rejected`` in a ``--no-commit``
    merge. That is the merger's own withdrawal: Bob's counts, Mallory's is ignored as hers."""
    write_plan(repo, text=PLAN)
    commit_all(repo, "agent: a plan", AGENT)
    _row(repo)
    git(repo, "checkout", "-q", "-b", "side", "main")
    (repo / "NOTES.md").write_text("unrelated\n")
    commit_all(repo, "agent: notes", AGENT)
    _merge(repo, "side", merger, "--no-commit")
    _set(repo, "rejected", merger)
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 2
    row = _row(repo)
    if counts:
        assert row.get("status") == "rejected", row
        assert _decisions(_audit(repo)) == [("reject", BOB[1])]
    else:
        assert row.get("status") == "pending_approval", row
        assert f"E_APPROVER_NOT_ALLOWED: {MALLORY[1]}" in json.dumps(row), row


def test_check_predicts_a_merged_strangers_rejection_ignored(repo: Path) -> None:
    """``plangate check --as bob`` of a pull request where Mallory rejects the agent's frozen
    plan and the agent adds a copy of that version, which Bob approves there: ``start`` (it
    predicted the merge as Bob's rejection, the version vetoed: ``E_VERSION_WITHDRAWN``), as
    the controller then runs the copy once the branch is merged."""
    write_plan(repo, text=PLAN)
    commit_all(repo, "agent: a plan", AGENT)
    _row(repo)  # frozen
    git(repo, "checkout", "-q", "-b", "pr", "main")
    _set(repo, "rejected", MALLORY)
    frozen = git(repo, "show", "main:plans/greet/PLAN.yml")
    write_plan(repo, "greet-2", text=frozen)
    commit_all(repo, "agent: the plan again", AGENT)
    _set(repo, "approved", BOB, "greet-2")
    config = repo.parent / "plangate.yml"
    config.write_text(CONFIG)
    result = run_cli(
        "check", "--config", str(config), "--base", "main", "--head", "pr",
        "--as", BOB[1], "--format", "json",
        cwd=repo,
    )  # fmt: skip
    assert result.stdout.strip(), result.stderr
    report = json.loads(result.stdout)
    rows = report if isinstance(report, list) else report.get("plans", [])
    [copy] = [r for r in rows if r.get("plan") == "plans/greet-2"]
    assert copy.get("outcome") == "start", copy
    _merge(repo, "pr", BOB)
    _row(repo, "greet-2")
    assert _row(repo, "greet-2").get("status") == "completed"
    assert _row(repo).get("status") == "pending_approval"


@pytest.mark.parametrize("then", ["released", "submitted-then-released"])
def test_a_strangers_rejection_merged_while_held_is_hers(repo: Path, then: str) -> None:
    """A twin ``PLAN.yaml`` holds the frozen plan; Mallory's ``rejected`` on her branch is
    merged ``--no-ff`` by Bob while held (and, in one variant, the agent sets the plan
    ``pending_approval`` again while still held); the twin deleted, the release judges the
    merge's status as Mallory's: ignored, and Bob's approval runs the plan."""
    write_plan(repo, text=PLAN)
    commit_all(repo, "agent: a plan", AGENT)
    _row(repo)  # frozen
    frozen = (repo / "plans" / "greet" / "PLAN.yml").read_text()
    (repo / "plans" / "greet" / "PLAN.yaml").write_text(frozen)
    commit_all(repo, "mallory: a twin", MALLORY)
    assert "E_PLAN_AMBIGUOUS" in json.dumps(_row(repo))
    _on_branch(repo, "rejected", MALLORY)
    _merge(repo, "side", BOB)
    if then == "submitted-then-released":
        _set(repo, "pending_approval", AGENT)
    (repo / "plans" / "greet" / "PLAN.yaml").unlink()
    commit_all(repo, "agent: the twin removed", AGENT)
    row = _row(repo)
    assert row.get("status") == "pending_approval", row
    assert f"{BOB[1]} set status rejected" not in json.dumps(row), row
    _set(repo, "approved", BOB)
    assert _row(repo).get("status") == "completed"


def _valid_runs(report: dict[str, Any], slug: str = "greet") -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{slug}" and e.get("approval_valid")
    ]


@pytest.mark.parametrize("passes", ["one-push", "a-pass-between"])
def test_an_authors_merged_draft_rejection_then_submitted_stays_ignored(
    repo: Path, passes: str
) -> None:
    """Round 122, merged-draft-rejection-judged-after-submit: the agent sets its DRAFT
    ``rejected`` on a branch, Bob merges it ``--no-ff``, then the agent submits it on main.
    A draft has no author withdrawers, and the rejection is judged where the merge brought it
    (the plan a draft there), whether or not a pass fell between the merge and the submission:
    ignored. In one push the scan judged it at its end, against the pending plan the agent
    submitted after the merge: "rejected by agent@example.com", and Bob's approval was
    E_ILLEGAL_TRANSITION. Bob's approval runs it, and the fresh-clone audit agrees."""
    write_plan(repo, text=DRAFT)
    commit_all(repo, "agent: a draft", AGENT)
    assert _row(repo).get("status") == "draft"
    _on_branch(repo, "rejected", AGENT)
    _merge(repo, "side", BOB)
    if passes == "a-pass-between":
        assert _row(repo).get("status") == "draft"
    _set(repo, "pending_approval", AGENT)
    row = _row(repo)
    assert row.get("status") == "pending_approval", row
    notes = json.dumps(row.get("notes"))
    assert f"E_APPROVER_NOT_ALLOWED: {AGENT[1]} set status rejected" in notes, row
    assert "set status rejected on a merged branch" not in notes, row
    _set(repo, "approved", BOB)
    assert _row(repo).get("status") == "completed"
    report = _audit(repo)
    assert len(_valid_runs(report)) == 1, report.get("executions")
    assert not [d for d in _decisions(report) if d[0] == "reject"], _decisions(report)


@pytest.mark.parametrize("merge", [(), ("-s", "ours")], ids=["no-ff", "ours"])
@pytest.mark.parametrize("passes", ["one-push", "a-pass-between"])
def test_a_merged_rejection_then_an_edit_on_the_line_in_one_push_still_withdraws(
    repo: Path, passes: str, merge: tuple[str, ...]
) -> None:
    """The order of the line, not where the passes fell: Alice rejects the agent's pending
    plan on her branch, Bob merges it ``--no-ff`` (or ``-s ours``: the merge changes nothing
    under the plans folder, no commit the scan applies), and the agent then edits the plan on
    main (v2). The rejection came first: the plan is ``rejected`` (terminal) and Bob's
    approval of v2 runs nothing, in one push as with a pass between. In one push the scan
    judged Alice's rejection at its end, against v2 ("a withdrawal of another version"):
    ignored, and Bob's approval ran v2, which the fresh-clone audit (judging it at the merge)
    called invalid."""
    write_plan(repo, text=PLAN)
    commit_all(repo, "agent: a plan", AGENT)
    assert _row(repo).get("status") == "pending_approval"
    _on_branch(repo, "rejected", ALICE)
    _merge(repo, "side", BOB, *merge)
    if passes == "a-pass-between":
        assert _row(repo).get("status") == "rejected"
    path = repo / "plans" / "greet" / "PLAN.yml"
    path.write_text(path.read_text().replace("Say hello to the world", "Say hello again"))
    edit_status(repo, "greet", "pending_approval")
    commit_all(repo, "agent: v2", AGENT)
    assert _row(repo).get("status") == "rejected"
    _set(repo, "approved", BOB)
    assert _row(repo).get("status") == "rejected"
    assert not _starts(repo)
    report = _audit(repo)
    assert _decisions(report) == [("reject", ALICE[1])], report.get("decisions")
    assert not _valid_runs(report), report.get("executions")


@pytest.mark.parametrize("merge", ["ours", "dropped"])
@pytest.mark.parametrize("passes", ["one-push", "a-pass-between"])
def test_a_copy_the_merge_discarded_makes_nothing_and_withdraws_nothing(
    repo: Path, passes: str, merge: str
) -> None:
    """Round 35's ``ours-copy``, read where the merges are: the agent's pull request adds a
    plan; Mallory's own branch adds a byte copy of it at ``plans/greet-m`` and rejects it
    there; she merges her branch ``-s ours`` (or with ``--no-commit`` and the copy removed
    before the merge commit): the content never reaches main from her branch. Then Bob merges
    the agent's pull request and Alice approves: it runs, whether or not a pass fell between
    the two merges, and the fresh-clone audit calls the run valid and lists no decision of
    Mallory's. Her merge made her the content's producer until the pull request was merged
    (its making counted from her merge although the merge discarded it), so her rejection
    vetoed the version by hash: in the audit, and in a controller with a pass between."""
    write_plan(repo, "ctl", text=PLAN.replace("Say hello to the world", "Say hello, ctl"))
    commit_all(repo, "agent: ctl", AGENT)
    _row(repo, "ctl")
    git(repo, "checkout", "-q", "-b", "pr", "main")
    write_plan(repo, text=PLAN)
    commit_all(repo, "agent: the plan", AGENT)
    git(repo, "checkout", "-q", "-b", "m", "main")
    write_plan(repo, "greet-m", text=PLAN)
    commit_all(repo, "mallory: a copy", MALLORY)
    _set(repo, "rejected", MALLORY, "greet-m")
    if merge == "ours":
        _merge(repo, "m", MALLORY, "-s", "ours")
    else:
        _merge(repo, "m", MALLORY, "--no-commit")
        git(repo, "rm", "-q", "-r", "-f", "plans/greet-m")
        git(repo, "commit", "-q", "-m", "merge m", env=identity(*MALLORY))
    assert not (repo / "plans" / "greet-m").exists()
    if passes == "a-pass-between":
        _row(repo, "ctl")
    _merge(repo, "pr", BOB)
    row = _row(repo)
    assert row.get("status") == "pending_approval", row
    assert "E_VERSION_WITHDRAWN" not in json.dumps(row), row
    _set(repo, "approved", ALICE)
    assert _row(repo).get("status") == "completed"
    report = _audit(repo)
    assert len(_valid_runs(report)) == 1, report.get("executions")
    mallorys = [d for d in report.get("decisions", []) if d.get("by") == MALLORY[1]]
    assert not mallorys, mallorys
