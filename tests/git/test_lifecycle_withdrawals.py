"""Withdrawals against every status a plan can be in (SPEC §4): an abort or a rejection by
someone entitled to it (an allowed approver or an author) wins over an approval the
controller has not acted on yet, and no status change leaves an approval nothing acts on
(the controller starts only a plan whose file still says ``approved``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex, PlanState, withdraw_rule
from controller.git.lifecycle import moves_run_on, shows_end, takes_over, unsealed_run_events
from controller.plan.schema import STATUSES
from controller.settings import ApprovalSettings
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOT,
    MALLORY,
    commit_all,
    edit_status,
    git,
    write_plan,
)

#: The seal every controller commit carries since round 66 (``Controller-Seal:``, 64 hex
#: digits): by git alone a run event without one is anyone's (round 69); its key is unknown here.
SEAL = f"Controller-Seal: {'5e' * 32}\n"
#: How each starting point is reached: (status, who) commits after the agent's plan.
ROADS: dict[str, list[tuple[str, tuple[str, str]]]] = {
    "pending_approval": [],
    "approved": [("approved", ALICE)],
    "executing": [("approved", ALICE), ("executing", BOT)],
    "awaiting_approval": [("approved", ALICE), ("executing", BOT), ("awaiting_approval", BOT)],
    "gate-approved": [
        ("approved", ALICE),
        ("executing", BOT),
        ("awaiting_approval", BOT),
        ("approved", ALICE),
    ],
    "failed": [("approved", ALICE), ("executing", BOT), ("failed", BOT)],
    "resume-approved": [
        ("approved", ALICE),
        ("executing", BOT),
        ("failed", BOT),
        ("approved", ALICE),
    ],
}
EVERY_STATUS = set(STATUSES) - {"approved"}
#: Where a withdrawal by someone not entitled leaves the plan: where it was, except that an
#: approval nobody acted on lapses back to where it was made.
UNMOVED = {
    "pending_approval": "pending_approval",
    "approved": "pending_approval",
    "executing": "executing",
    "awaiting_approval": "awaiting_approval",
    "gate-approved": "awaiting_approval",
    "failed": "failed",
    "resume-approved": "failed",
}


def _walk(repo: Path, tmp_path: Path, road: list[tuple[str, tuple[str, str]]]) -> PlanState:
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    for status, who in road:
        edit_status(repo, "p", status)
        commit_all(repo, f"status {status}", who)
    policy = ApprovalSettings(approvers=["alice@example.com"])
    index = HistoryIndex(
        tmp_path / "index.sqlite",
        plans_dir="plans",
        controller_email="plangate@localhost",
        may_withdraw=withdraw_rule(policy),
    )
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    return index.plans["plans/p"]


def _acted_on(state: PlanState) -> None:
    """Something acts on the plan: an open approval is one the controller can start (the
    file says approved), and an effective ``approved`` always has one."""
    if state.request is not None:
        assert state.status == state.file_status == "approved", state
    assert state.status != "approved" or state.request is not None, state


@pytest.mark.parametrize("start", list(ROADS))
@pytest.mark.parametrize("word", ["aborted", "rejected"])
@pytest.mark.parametrize("who", [ALICE, AGENT], ids=["approver", "author"])
def test_an_entitled_withdrawal_wins_from_every_status(
    repo: Path, tmp_path: Path, start: str, word: str, who: tuple[str, str]
) -> None:
    state = _walk(repo, tmp_path, [*ROADS[start], (word, who)])
    _acted_on(state)
    assert state.request is None, "an approval survived its withdrawal"
    if start == "pending_approval" and word == "aborted":
        # nothing runs yet: there is nothing to abort (reject it); ignored and reported
        assert state.status == "pending_approval" and not state.abort_requested
        assert any("E_ILLEGAL_TRANSITION" in n for n in state.notes)
    elif start in ("pending_approval", "approved") and word == "rejected":
        assert state.status == "rejected" and not state.abort_requested  # never started
    else:  # the controller records aborted (and stops a run): nothing more runs
        assert state.status == "aborted" and state.abort_requested, state


@pytest.mark.parametrize("start", list(ROADS))
@pytest.mark.parametrize("word", ["aborted", "rejected"])
def test_a_withdrawal_by_anyone_else_is_ignored_but_never_wedges(
    repo: Path, tmp_path: Path, start: str, word: str
) -> None:
    state = _walk(repo, tmp_path, [*ROADS[start], (word, MALLORY)])
    _acted_on(state)
    assert state.status == UNMOVED[start] and not state.abort_requested, state
    assert any("E_APPROVER_NOT_ALLOWED" in n or "E_ILLEGAL" in n for n in state.notes)


@pytest.mark.parametrize("start", ["approved", "gate-approved", "resume-approved"])
@pytest.mark.parametrize("status", [*sorted(EVERY_STATUS), "nonsense"])
def test_no_status_change_leaves_an_open_approval_unacted(
    repo: Path, tmp_path: Path, start: str, status: str
) -> None:
    """Whatever a human writes over an approval before the controller acts on it."""
    _acted_on(_walk(repo, tmp_path, [*ROADS[start], (status, ALICE)]))


@pytest.mark.parametrize("first", ["aborted", "rejected"])
def test_an_approval_after_the_withdrawal_does_not_undo_it(
    repo: Path, tmp_path: Path, first: str
) -> None:
    state = _walk(repo, tmp_path, [*ROADS["gate-approved"], (first, AGENT), ("approved", ALICE)])
    _acted_on(state)
    assert state.status == "aborted" and state.abort_requested and state.request is None


def _abort_road(
    repo: Path, tmp_path: Path, asked: bool, own: bool | None
) -> tuple[HistoryIndex, str]:
    """A plan paused at its gate, (Alice's abort request,) then a well-shaped ``plangate:
    abort`` under the controller's name, author and committer; the index read by git alone
    (``own`` None) or with a record of the controller's commits that does (not) hold it."""
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    for status, who in ROADS["awaiting_approval"]:
        edit_status(repo, "p", status)
        commit_all(repo, f"status {status}", who)
    if asked:
        edit_status(repo, "p", "aborted")
        commit_all(repo, "abort p", ALICE)
    edit_status(repo, "p", "aborted")
    (repo / "plans" / "p" / "PLAN.yml").write_text(
        (repo / "plans" / "p" / "PLAN.yml").read_text() + "# aborted\n"
    )
    sha = commit_all(
        repo,
        f"plangate: abort plans/p\n\nPlan: plans/p\nAborted-By: alice@example.com\n{SEAL}",
        BOT,
    )
    index = HistoryIndex(
        tmp_path / "index.sqlite",
        plans_dir="plans",
        controller_email="plangate@localhost",
        may_withdraw=withdraw_rule(ApprovalSettings(approvers=["alice@example.com"])),
        own_commit=None if own is None else (lambda made: own or made != sha),
    )
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    return index, sha


def test_an_abort_no_one_asked_for_is_not_the_controllers(repo: Path, tmp_path: Path) -> None:
    """Round 65: the controller aborts only on an abort request; by git alone a commit under
    its name that records one with no request open is anyone's (its ``aborted`` ignored)."""
    index, sha = _abort_road(repo, tmp_path, asked=False, own=None)
    state = index.plans["plans/p"]
    assert state.status == "awaiting_approval" and not state.abort_requested
    record = GitRepo(repo).commit(sha)
    assert "no abort request" in (index.disowned(record) or "")


@pytest.mark.parametrize(("asked", "own"), [(True, None), (False, True)])
def test_an_abort_answering_a_request_or_in_its_record_is_the_controllers(
    repo: Path, tmp_path: Path, asked: bool, own: bool | None
) -> None:
    """Her abort request makes the controller's abort its own by git alone; with a record of
    its commits the record decides, whatever history shows."""
    index, sha = _abort_road(repo, tmp_path, asked=asked, own=own)
    assert index.plans["plans/p"].status == "aborted"
    assert not index.plans["plans/p"].abort_requested  # the controller's abort answered it
    assert index.disowned(GitRepo(repo).commit(sha)) is None


def test_a_commit_its_record_lacks_is_disowned(repo: Path, tmp_path: Path) -> None:
    index, sha = _abort_road(repo, tmp_path, asked=True, own=False)
    assert index.plans["plans/p"].abort_requested  # her request; no abort of the controller's
    assert "record" in (index.disowned(GitRepo(repo).commit(sha)) or "")


def _complete_road(repo: Path, tmp_path: Path, road: str, side: bool) -> tuple[HistoryIndex, str]:
    """The plan reached by ``road``, then a batched ``complete`` of it under the controller's
    name (author and committer), on the branch or on a review branch merged after it."""
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    if side:
        git(repo, "checkout", "-q", "-b", "review")
    for status, who in ROADS[road]:
        edit_status(repo, "p", status)
        commit_all(repo, f"status {status}", who)
    edit_status(repo, "p", "completed")
    sha = commit_all(
        repo,
        "plangate: 1 plan events\n\nPlan: plans/p\nPlan-Event: complete\n"
        f"Plan-Status: completed\nController: host/3f2a9c1b\n{SEAL}",
        BOT,
    )
    if side:
        git(repo, "checkout", "-q", "-")
        git(repo, "merge", "-q", "--no-ff", "-m", "merge review", "review")
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    return index, sha


@pytest.mark.parametrize("road", ["pending_approval", "approved", "failed"])
def test_an_outcome_of_a_plan_never_started_is_not_the_controllers(
    repo: Path, tmp_path: Path, road: str
) -> None:
    """Round 66: one rule for every run event: by git alone, an outcome under the
    controller's name of a plan it had not started is anyone's (its status ignored)."""
    index, sha = _complete_road(repo, tmp_path, road, side=False)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert index.plans["plans/p"].status != "completed"
    assert "complete plans/p" in (index.disowned(GitRepo(repo).commit(sha)) or "")


def test_an_outcome_of_a_started_run_is_the_controllers(repo: Path, tmp_path: Path) -> None:
    """Its run started: the controller's outcome (the index applies it as its own)."""
    index, _sha = _complete_road(repo, tmp_path, "executing", side=False)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert index.plans["plans/p"].status == "completed"


@pytest.mark.parametrize("road", ["awaiting_approval", "gate-approved"])
def test_an_outcome_of_a_run_paused_at_its_gate_is_not_the_controllers(
    repo: Path, tmp_path: Path, road: str
) -> None:
    """Round 67: a paused run is ended only by a resume start after its gate approval or an
    abort answering a request; by git alone a ``complete`` of it is anyone's (the pause, or
    her gate approval of it, stands) and the audit flags it."""
    index, sha = _complete_road(repo, tmp_path, road, side=False)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert index.plans["plans/p"].status != "completed"
    assert "complete plans/p" in (index.disowned(GitRepo(repo).commit(sha)) or "")


@pytest.mark.parametrize(
    ("road", "disowned"),
    [("approved", True), ("awaiting_approval", True), ("executing", False)],
)
def test_an_outcome_on_a_merged_branch_is_judged_by_the_same_rule(
    repo: Path, tmp_path: Path, road: str, disowned: bool
) -> None:
    """On a merged branch, by the plan's file where the event was made (its parent)."""
    index, sha = _complete_road(repo, tmp_path, road, side=True)
    gitrepo = GitRepo(repo)
    merge = gitrepo.commit(git(repo, "rev-parse", "HEAD").strip())
    index.merged_authors(gitrepo, merge.parents[0], merge.sha)
    found = {record.sha: why for record, why in index.side_disowned}
    assert (sha in found) is disowned, found
    if disowned:
        assert "complete plans/p" in found[sha]


def test_an_outcome_in_a_folder_holding_both_names_has_no_cause(repo: Path, tmp_path: Path) -> None:
    """A folder holding PLAN.yml and PLAN.yaml holds no plan (`E_PLAN_AMBIGUOUS`, one way to
    find a plan's file for every reader, round 68): the merged branch's ``complete`` under
    the controller's name is judged by no file, not by PLAN.yml read first."""
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    git(repo, "checkout", "-q", "-b", "review")
    for status, who in ROADS["executing"]:
        edit_status(repo, "p", status)
        commit_all(repo, f"status {status}", who)
    (repo / "plans" / "p" / "PLAN.yaml").write_text((repo / "plans/p/PLAN.yml").read_text())
    commit_all(repo, "a second name beside it", AGENT)
    edit_status(repo, "p", "completed")
    sha = commit_all(
        repo,
        "plangate: 1 plan events\n\nPlan: plans/p\nPlan-Event: complete\n"
        "Plan-Status: completed\nController: host/3f2a9c1b\n",
        BOT,
    )
    git(repo, "checkout", "-q", "-")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge review", "review")
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    gitrepo = GitRepo(repo)
    merge = gitrepo.commit(git(repo, "rev-parse", "HEAD").strip())
    index.merged_authors(gitrepo, merge.parents[0], merge.sha)
    found = {record.sha: why for record, why in index.side_disowned}
    assert "complete plans/p" in found.get(sha, ""), found


def _foreign_end(repo: Path, tmp_path: Path, road: str, event: str, status: str) -> PlanState:
    """The plan reached by ``road``, then a batched ``event`` under the controller's name
    setting ``status``, which the controller's record of its commits lacks (live)."""
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    for was, who in ROADS[road]:
        edit_status(repo, "p", was)
        commit_all(repo, f"status {was}", who)
    edit_status(repo, "p", status)
    sha = commit_all(
        repo,
        f"plangate: 1 plan events\n\nPlan: plans/p\nPlan-Event: {event}\n"
        f"Plan-Status: {status}\nController: host/3f2a9c1b\n",
        BOT,
    )
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost",
                         own_commit=lambda made: made != sha)  # fmt: skip
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    return index.plans["plans/p"]


@pytest.mark.parametrize(
    ("road", "event", "status", "reads"),
    [
        ("executing", "fail", "failed", "failed"),  # an end another host can make
        ("executing", "abort", "aborted", "aborted"),  # fails closed, as the check drops it
        ("executing", "complete", "completed", "executing"),  # progress: anyone's
        ("executing", "fail", "completed", "executing"),  # the file shows another end
        ("awaiting_approval", "fail", "failed", "awaiting_approval"),  # a paused run's end
    ],
)
def test_the_index_reads_a_foreign_run_event_as_the_take_over_check_does(
    repo: Path, tmp_path: Path, road: str, event: str, status: str, reads: str
) -> None:
    """Round 67: the take-over check drops a run on a later start, a ``fail`` or an
    ``abort`` under the controller's name that it did not make; the index reads the same
    entry as the end the branch shows (a resume or abort goes on from there), never as an
    ignored edit that leaves the plan ``executing`` with nothing running."""
    assert _foreign_end(repo, tmp_path, road, event, status).status == reads


@pytest.mark.parametrize(
    ("event", "status", "writes", "moved"),
    [
        ("start", "executing", "executing", True),
        ("fail", "executing", "failed", True),
        ("abort", "executing", "aborted", True),
        ("fail", "awaiting_approval", "failed", False),
        ("complete", "executing", "completed", False),
        ("checkpoint", "executing", "executing", False),
        ("fail", "executing", "aborted", False),
        (None, "executing", "failed", False),
    ],
)
def test_one_rule_says_which_foreign_run_events_move_a_run_on(
    event: str | None, status: str, writes: str, moved: bool
) -> None:
    assert moves_run_on(event, status, writes) is moved
    assert takes_over(event, own=False) is (event in ("start", "fail", "abort"))


@pytest.mark.parametrize("gate_approved", [False, True])
def test_a_paused_run_started_on_the_branch_is_ended_by_no_outcome(
    repo: Path, tmp_path: Path, gate_approved: bool
) -> None:
    """Round 67: the run's start is on the branch, but it paused at its gate (and her gate
    approval, if any, is not acted on yet: no resume start): a ``complete`` naming the
    started hash is still anyone's by git alone."""
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    edit_status(repo, "p", "approved")
    commit_all(repo, "approve p", ALICE)
    for event, status in (("start", "executing"), ("await-approval", "awaiting_approval")):
        edit_status(repo, "p", status)
        commit_all(repo, f"plangate: {event} plans/p\n\nPlan: plans/p\n{SEAL}", BOT)
    if gate_approved:
        edit_status(repo, "p", "approved")
        commit_all(repo, "approve the gate", ALICE)
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    started = index.plans["plans/p"].hash
    assert started and index.plans["plans/p"].status == (
        "approved" if gate_approved else "awaiting_approval"
    )
    edit_status(repo, "p", "completed")
    sha = commit_all(
        repo,
        "plangate: 1 plan events\n\nPlan: plans/p\nPlan-Event: complete\n"
        f"Plan-Status: completed\nPlan-Hash: {started}\nController: host/3f2a9c1b\n{SEAL}",
        BOT,
    )
    assert "complete plans/p with no cause" in (index.disowned(GitRepo(repo).commit(sha)) or "")
    index.scan(GitRepo(repo), sha)
    assert index.plans["plans/p"].status != "completed"


@pytest.mark.parametrize(
    ("tree", "reads", "moved"),
    [
        ("failed", "failed", True),  # the file shows the end, same version
        ("executing", "executing", False),  # a trailer alone (round 68: the batched fail)
        ("new-version", "executing", False),  # an end carrying another version
        ("beside", "executing", False),  # only a file beside the plan changed
    ],
)
def test_the_take_over_check_reads_a_foreign_end_as_the_index_does(
    repo: Path, tmp_path: Path, tree: str, reads: str, moved: bool
) -> None:
    """Round 68: one rule (``shows_end``) for the index and the take-over check
    (``Lifecycle.moved_on_by``): a ``fail`` under the controller's name that it did not make
    moves the run on only when the plan's file at that commit shows ``failed``, of the run's
    version; the check dropped the run on the trailer alone while the index read nothing."""
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    for was, who in ROADS["executing"]:
        edit_status(repo, "p", was)
        commit_all(repo, f"status {was}", who)
    if tree in ("failed", "new-version"):
        edit_status(repo, "p", "failed")
    if tree == "new-version":
        path = repo / "plans" / "p" / "PLAN.yml"
        path.write_text(path.read_text().replace("who: world", "who: mallory"))
    if tree in ("executing", "beside"):
        (repo / "plans" / "p" / "notes.txt").write_text("x\n")
    sha = commit_all(
        repo,
        "plangate: 1 plan events\n\nPlan: plans/p\nPlan-Event: fail\nPlan-Status: failed\n",
        BOT,
    )
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost",
                         own_commit=lambda made: made != sha)  # fmt: skip
    gitrepo = GitRepo(repo)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    state = index.plans["plans/p"]
    version = state.approved_hash or state.hash
    assert state.status == reads
    assert index.moved_on_by(gitrepo, gitrepo.commit(sha), "plans/p", version) is moved


def test_an_end_of_another_version_is_not_the_runs() -> None:
    """``shows_end`` reads the version too: the end a file shows of another version (or of
    none: a file that does not parse) moves no run on."""
    from controller.git.planstate import BlobFacts

    failed = BlobFacts("failed", "sha256:a", "sha256:a", "", True)
    assert shows_end("fail", "executing", failed, "sha256:a")
    assert not shows_end("fail", "executing", failed, "sha256:b")
    assert not shows_end("fail", "executing", None, "sha256:a")
    assert not shows_end("fail", "executing", failed, None)


def _run_event(
    repo: Path, tmp_path: Path, road: str, event: str, status: str, seal: str, side: bool = False
) -> tuple[HistoryIndex, str]:
    """The plan reached by ``road``, then a ``plangate: <event>`` under the controller's name
    (author and committer) setting ``status``, carrying ``seal`` (a trailer line, or none), on
    the branch or on a review branch merged after it; the index reads git alone."""
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    if side:
        git(repo, "checkout", "-q", "-b", "review")
    for was, who in ROADS[road]:
        edit_status(repo, "p", was)
        commit_all(repo, f"status {was}", who)
    edit_status(repo, "p", status)
    sha = commit_all(
        repo,
        f"plangate: {event} plans/p\n\nPlan: plans/p\nPlan-Status: {status}\n"
        f"Controller: host/3f2a9c1b\n{seal}",
        BOT,
    )
    if side:
        git(repo, "checkout", "-q", "-")
        git(repo, "merge", "-q", "--no-ff", "-m", "merge review", "review")
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    return index, sha


@pytest.mark.parametrize(
    ("road", "event", "status", "stays"),
    [
        ("pending_approval", "start", "executing", "pending_approval"),  # round 69's forgery
        ("awaiting_approval", "start", "executing", "awaiting_approval"),  # a forged resume
        ("executing", "complete", "completed", "executing"),
        ("executing", "checkpoint", "executing", "executing"),
    ],
)
def test_an_unsealed_run_event_is_not_the_controllers(
    repo: Path, tmp_path: Path, road: str, event: str, status: str, stays: str
) -> None:
    """Round 69: every controller commit is sealed since round 66, so by git alone (a fresh
    clone's audit) a run event under its name with no ``Controller-Seal:`` is anyone's, as
    the live controller reads it by its record: the plan stays where it was (an unsealed
    ``start`` read as the run made the controller's real start after her approval
    ``started-twice``)."""
    index, sha = _run_event(repo, tmp_path, road, event, status, seal="")
    state = index.plans["plans/p"]
    assert state.status == stays, state
    why = index.disowned(GitRepo(repo).commit(sha)) or ""
    assert f"{event} plans/p with no Controller-Seal:" in why, why


@pytest.mark.parametrize(
    "seal",
    [
        "Controller-Seal: " + "5E" * 32 + "\n",  # upper case: not what the controller writes
        "Controller-Seal: " + "5e" * 31 + "\n",  # cut
        "Controller-Seal:\n",
    ],
)
def test_a_seal_of_another_shape_is_no_seal(repo: Path, tmp_path: Path, seal: str) -> None:
    index, sha = _run_event(repo, tmp_path, "pending_approval", "start", "executing", seal)
    assert index.plans["plans/p"].status == "pending_approval"
    assert "no Controller-Seal:" in (index.disowned(GitRepo(repo).commit(sha)) or "")


def test_a_sealed_run_event_stands_by_git_alone(repo: Path, tmp_path: Path) -> None:
    """A seal of the right shape cannot be verified without the key: git alone reads the
    sealed start as the controller's (rounds 67-68: the audit judges it by its approval), and
    an unsealed freeze or refusal is judged by what it changes, as before."""
    index, sha = _run_event(repo, tmp_path, "approved", "start", "executing", SEAL)
    assert index.plans["plans/p"].status == "executing"
    assert index.disowned(GitRepo(repo).commit(sha)) is None
    freeze = commit_all(repo, "plangate: freeze plans/p\n\nPlan: plans/p\n", BOT)
    assert unsealed_run_events(GitRepo(repo).commit(freeze)) == []


def test_an_unsealed_run_event_on_a_merged_branch_is_disowned(repo: Path, tmp_path: Path) -> None:
    """The same rule on a merged branch: the audit flags it there too."""
    index, sha = _run_event(repo, tmp_path, "executing", "complete", "completed", "", side=True)
    gitrepo = GitRepo(repo)
    merge = gitrepo.commit(git(repo, "rev-parse", "HEAD").strip())
    index.merged_authors(gitrepo, merge.parents[0], merge.sha)
    found = {record.sha: why for record, why in index.side_disowned}
    assert "complete plans/p with no Controller-Seal:" in found.get(sha, ""), found


@pytest.mark.parametrize("edited", [False, True])
def test_a_rename_back_and_forth_is_no_event_of_the_plan(
    repo: Path, tmp_path: Path, edited: bool
) -> None:
    """Round 70: a plan's identity is its folder. PLAN.yml renamed PLAN.yaml and back (the
    removal listed before the name added, then after it), with or without an edit, keeps
    the plan's state: the rename back read as a new plan "from nothing" lost its run."""
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    for status, who in ROADS["failed"]:
        edit_status(repo, "p", status)
        ran = commit_all(repo, f"status {status}", who)
    git(repo, "mv", "plans/p/PLAN.yml", "plans/p/PLAN.yaml")
    commit_all(repo, "to yaml", ALICE)
    git(repo, "mv", "plans/p/PLAN.yaml", "plans/p/PLAN.yml")
    if edited:
        with (repo / "plans/p/PLAN.yml").open("a") as out:
            out.write("# tidied\n")
    commit_all(repo, "back to yml", MALLORY)
    states = []
    for name, upto in (("before", ran), ("after", git(repo, "rev-parse", "HEAD").strip())):
        index = HistoryIndex(tmp_path / f"{name}.sqlite", plans_dir="plans",
                             controller_email="plangate@localhost")  # fmt: skip
        index.scan(GitRepo(repo), upto)
        states.append(index.plans["plans/p"])
    kept = [(s.status, s.approver, s.approved_hash, s.frozen_hash, s.file) for s in states]
    assert kept[0] == kept[1] and kept[1][0] == "failed", states
    # an edit is read as one in place (of a failed plan: ignored), never as a new plan
    assert "(from nothing)" not in states[1].last_event + " ".join(states[1].notes), states


@pytest.mark.parametrize("noted", [False, True], ids=["kept", "noted"])
@pytest.mark.parametrize("road", ["awaiting_approval", "failed", "pending_approval"])
def test_a_merged_rename_with_an_approval_is_no_new_plan(
    repo: Path, tmp_path: Path, road: str, noted: bool
) -> None:
    """Round 71: Alice's review branch approves the plan (a gate, a resume, a first approval)
    AND renames it PLAN.yml -> PLAN.yaml in one commit (``noted``: a comment added too),
    merged ``--no-ff``. The merge's rename was read as a new plan "from nothing" (approved:
    a run of that version was already recorded, E_ALREADY_EXECUTED, and the paused run
    committed ``pending_approval``); it is the approval in place, as the same approval
    without the rename reads (with the comment, the rename's touch names the merger too)."""
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT)
    for status, who in ROADS[road]:
        edit_status(repo, "p", status)
        commit_all(repo, f"status {status}", who)
    states = []
    for renamed in (False, True):
        git(repo, "checkout", "-q", "-b", f"alice/{renamed}", "main")
        edit_status(repo, "p", "approved")
        if noted:
            with (repo / "plans/p/PLAN.yml").open("a") as out:
                out.write("# looked at\n")
        if renamed:
            git(repo, "mv", "plans/p/PLAN.yml", "plans/p/PLAN.yaml")
        commit_all(repo, "approve", ALICE)
        git(repo, "checkout", "-q", "main")
        git(repo, "merge", "-q", "--no-ff", "-m", "merge", f"alice/{renamed}")
        index = HistoryIndex(tmp_path / f"{renamed}.sqlite", plans_dir="plans",
                             controller_email="plangate@localhost")  # fmt: skip
        index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
        states.append(index.plans["plans/p"])
        git(repo, "reset", "-q", "--hard", "HEAD^")
    kept = [(s.status, (s.request or {}).get("kind"), s.hash) for s in states]
    assert kept[0] == kept[1] and kept[1][0] == "approved", states
    assert noted or states[0].changers == states[1].changers, states
    assert "(from nothing)" not in states[1].last_event + " ".join(states[1].notes), states
