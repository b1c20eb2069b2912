"""What an approving commit binds itself to (SPEC §5): a commit that names the plans it
approves (``plangate approve``'s ``Plan:``/``Plan-Hash:`` trailers, ``Plan-Approved:``)
approves only those; prose that happens to start with ``Plan:`` names nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.git.gitrepo import Person
from controller.git.lifecycle import _binding, _decision
from controller.git.records import CommitRecord

ALICE = Person("Alice", "alice@example.com")
AGENT = Person("Agent", "agent@example.com")
H1 = "sha256:" + "1" * 64
H2 = "sha256:" + "2" * 64


def _record(body: str) -> CommitRecord:
    return CommitRecord("a" * 40, ("b" * 40,), ALICE, ALICE, 1, 1, "approve", body=body)


CASES = {
    "no-trailers": ("approving after review\n", (None, None)),
    "cli-this-plan": (f"Plan: plans/a\nPlan-Hash: {H1}\nPlan-Status: approved\n", (H1, None)),
    "cli-other-plan": (f"Plan: plans/b\nPlan-Hash: {H1}\n", (None, "plans/b")),
    "plan-approved-other": (f"Plan-Approved: plans/b {H1}\n", (None, "plans/b")),
    "plan-approved-this": (f"Plan-Approved: plans/a {H2}\n", (H2, None)),
    # a squash merge of two `plangate approve` commits names both: each is approved
    "squash-both": (
        f"* approve plans/b\n\nPlan: plans/b\nPlan-Hash: {H2}\n\n"
        f"* approve plans/a\n\nPlan: plans/a\nPlan-Hash: {H1}\n",
        (H1, None),
    ),
    "hash-none": ("Plan: plans/a\nPlan-Hash: none\n", (None, None)),
    "prose": ("Plan: migrate the database first\n", (None, None)),
    "outside-plans": ("Plan: docs/a\n", (None, None)),
}


@pytest.mark.parametrize("body,expected", list(CASES.values()), ids=list(CASES))
def test_what_an_approval_names(body: str, expected: tuple[str | None, str | None]) -> None:
    assert _binding(_record(body), "plans/a", "plans") == expected


def test_a_root_plans_folder_counts_names_without_spaces() -> None:
    assert _binding(_record("Plan: b\n"), "a", ".") == (None, "b")
    assert _binding(_record("Plan: ship it now\n"), "a", ".") == (None, None)


def _approval(sha: str, author_time: int, commit_time: int, by: Person = ALICE) -> CommitRecord:
    """Alice's approval, committed by ``by``."""
    return CommitRecord(sha * 40, ("b" * 40,), ALICE, by, author_time, commit_time, "approve")


GITHUB = Person("GitHub", "noreply@github.com")
BOB = Person("Bob", "bob@example.com")
#: what an approval decides (plan, status); the version binds it through ``made_for``
A, B, C = (_decision(f"plans/{p}", "approved") for p in "abc")
B_REJECTED = _decision("plans/b", "rejected")


def test_an_approval_brought_back_for_another_version_is_a_replay() -> None:
    from controller.git.history import HistoryIndex

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        first = _approval("1", 100, 100)
        assert index._seen_approval(first, A, "v1") is None
        assert index._seen_approval(first, A, "v2") is None  # the same commit
        assert index._seen_approval(_approval("2", 100, 100), A, "v1") is None
        # the same decision cherry-picked (a new committer date) for another version or
        # pause: a replay, whoever carried it (round 6; round 62: not by the committer)
        assert index._seen_approval(_approval("3", 100, 700), A, "v2") == "1" * 40
        assert index._seen_approval(_approval("3", 100, 700, GITHUB), A, "v2") == "1" * 40
        # a fresh commit in the same second with the same subject (a gate approved at once)
        assert index._seen_approval(_approval("4", 100, 100), A, "v2") is None
        # moved onto another plan by another hand than the one that put hers on the branch
        # (``git am --directory`` by the agent): a replay (round 4)
        assert index._seen_approval(_approval("5", 100, 700, AGENT), B, "v2") == "1" * 40
        # a fresh commit for another plan in the same second, with the same subject: its own
        assert index._seen_approval(_approval("6", 100, 100), C, "v3") is None
    finally:
        index.close()


def test_her_own_decisions_in_one_second_are_no_replays_of_each_other() -> None:
    """Round 60: two plans approved in one second with one stock subject, then ``git pull
    --rebase`` (both committer dates moved, both committed by her): two decisions, two
    approvals. The same decision brought back for another pause still is a replay."""
    from controller.git.history import HistoryIndex

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        assert index._seen_approval(_approval("1", 100, 140), A, "a") is None
        assert index._seen_approval(_approval("2", 100, 141), B, "b") is None
        assert index._replayed(_approval("3", 100, 142)) is None  # her rejection of a third
        assert index._replayed(_approval("4", 100, 143, AGENT)) == "1" * 40  # re-created
        assert index._seen_approval(_approval("5", 100, 144), B, "b-gate") == "2" * 40
    finally:
        index.close()


@pytest.mark.parametrize("hand", [GITHUB, BOB], ids=["forge-rebase-merge", "maintainer-rebase"])
def test_her_decisions_carried_by_one_other_hand_are_hers(hand: Person) -> None:
    """Round 62: her review branch (a and b approved, c rejected, one second, one subject)
    re-created by a forge's rebase-merge or a maintainer's rebase: every commit committed by
    that hand with a committer date of its own. Three decisions, none a replay; the same
    hand bringing her approval of a back for another version still replays it."""
    from controller.git.history import HistoryIndex

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        assert index._seen_approval(_approval("1", 100, 190, hand), A, "a") is None
        assert index._seen_approval(_approval("2", 100, 191, hand), B, "b") is None
        assert index._replayed(_approval("3", 100, 192, hand)) is None  # her rejection of c
        assert index._replayed(_approval("4", 100, 193, AGENT)) == "1" * 40  # another hand
        assert index._seen_approval(_approval("5", 100, 194, hand), A, "a-v2") == "1" * 40
    finally:
        index.close()


def test_the_web_editor_commits_her_decisions_as_it_makes_them() -> None:
    """Round 62 ``web-late``: two approvals in the forge's web editor in one second (author
    her, committer the forge, one default subject), the second's committer date a second
    later: one hand, two decisions."""
    from controller.git.history import HistoryIndex

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        assert index._seen_approval(_approval("1", 100, 100, GITHUB), A, "a") is None
        assert index._seen_approval(_approval("2", 100, 101, GITHUB), B, "b") is None
    finally:
        index.close()


def test_a_merge_re_created_by_someone_else_decides_nothing_new() -> None:
    """Round 18 ``veto``: her merge re-created by the agent (``rebase -r``, ``merge -C``)
    over branches approving one plan and rejecting another: the rejection is no
    withdrawal, although one hand carried both (no forge re-creates a merge), and
    whoever the committer is (a merge brought back is a re-created one)."""
    from controller.git.history import HistoryIndex

    def merge(sha: str, commit_time: int) -> CommitRecord:
        parents = ("b" * 40, "c" * 40)
        return CommitRecord(sha * 40, parents, ALICE, AGENT, 100, commit_time, "Merge docs")

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        assert index._seen_approval(merge("1", 300), A, "a") is None
        assert index._replayed(merge("2", 301)) == "1" * 40
        forged = CommitRecord("3" * 40, ("b" * 40, "d" * 40), ALICE, ALICE, 100, 302, "Merge docs")
        assert index._replayed(forged) == "1" * 40
    finally:
        index.close()


def _lapsed(index: object, key: str) -> bool:
    from controller.git.lifecycle import _seen_fields

    return _seen_fields(index.approval_ids[key])[3]  # type: ignore[attr-defined]


def test_a_lapsed_decision_comes_back_only_from_the_hand_that_committed_it() -> None:
    """Round 63: her approval (committed by her) taken back before the controller acted on
    it, then the same decision for the same version and pause again: her own cherry-pick
    counts, the agent's cherry-pick or ``am`` (a committer date of its own or not) is a
    replay; before it lapsed, such a copy was the same approval counted once."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import _approval_identity

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        first = _approval("1", 100, 100)
        key = _approval_identity(first, A)
        assert index._seen_approval(first, A, "v1") is None
        assert index._seen_approval(_approval("2", 100, 100, AGENT), A, "v1") is None
        index._note_lapse({"identity": key})
        index._note_lapse({"identity": key})  # marked once
        assert _lapsed(index, key)
        assert index._seen_approval(_approval("3", 100, 700), A, "v1") is None  # her pick
        assert index._seen_approval(_approval("4", 100, 700, AGENT), A, "v1") == "1" * 40
        assert index._seen_approval(_approval("5", 100, 100, AGENT), A, "v1") == "1" * 40
        # another decision of that second (another plan) stays judged by its hand alone
        assert index._seen_approval(_approval("6", 100, 800), B, "b") is None
        assert not _lapsed(index, _approval_identity(first, B))
    finally:
        index.close()


def test_a_lapse_is_kept_with_the_identity() -> None:
    """The mark is stored with the identity's entry (a pass that saw her revert, then
    another that sees the agent's pick: round 63 ``lapse-seen``); an entry from before round
    62 (no hand) is her author's own, and a request from before the mark names no identity."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import _approval_identity, _digest, _seen_fields

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        first, made = _approval("1", 100, 100), _digest("made")[:16]
        key = _approval_identity(first, A)
        index.approval_ids[key] = f"{'1' * 40} {made}"  # written before round 62
        index._note_lapse({"identity": key})
        index._note_lapse({"commit": "1" * 40})
        index._note_lapse(None)
        assert _seen_fields(index._new_approval_ids[key]) == ("1" * 40, made, "", True)
        assert index._seen_approval(_approval("2", 100, 700), A, "made") is None
        assert index._seen_approval(_approval("3", 100, 700, AGENT), A, "made") == "1" * 40
    finally:
        index.close()


def test_a_lapsed_decision_the_forge_committed_comes_back_only_from_her_own_hand() -> None:
    """Round 64 ``forge-hand``: her approval made and taken back in the forge's web editor
    (committer the forge), then the agent's pull request holding its copy rebase-merged by
    the forge (committer the forge again): the forge is the hand of everyone it merges for,
    so only a copy she committed herself brings her lapsed decision back."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import _approval_identity

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        first = _approval("1", 100, 100, GITHUB)
        assert index._seen_approval(first, A, "v1") is None
        assert index._seen_approval(_approval("2", 100, 700, GITHUB), A, "v1") is None
        index._note_lapse({"identity": _approval_identity(first, A)})
        assert index._seen_approval(_approval("3", 100, 800, GITHUB), A, "v1") == "1" * 40
        assert index._seen_approval(_approval("4", 100, 800, BOB), A, "v1") == "1" * 40
        assert index._seen_approval(_approval("5", 100, 800), A, "v1") is None  # her pick
    finally:
        index.close()


def test_a_decision_taken_back_on_a_merged_branch_lapses() -> None:
    """Round 64 ``br-pick``: her approval and its revert on her review branch, merged with a
    merge commit, were never on the line: the decision is kept lapsed, bound to no version or
    pause (the branch's are not tracked), so a copy counts only from her own hand, for any
    version; a decision the line already holds keeps its binding and its first commit."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import UNBOUND, _approval_identity, _hand, _seen_fields

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        side = _approval("1", 100, 100)
        key = _approval_identity(side, A)
        index._mark_lapsed(key, f"{side.sha} {_hand(side)}")
        assert _seen_fields(index._new_approval_ids[key]) == (side.sha, UNBOUND, _hand(side), True)
        assert index._seen_approval(_approval("2", 100, 700, AGENT), A, "v1") == "1" * 40
        assert index._seen_approval(_approval("3", 100, 700, AGENT), A, "v2") == "1" * 40
        assert index._seen_approval(_approval("4", 100, 700), A, "v1") is None  # her pick
        # her pick is the line's first commit of that second: another plan's decision of it
        # moved by another hand (``am --directory``, round 4) is a replay of it
        assert index._replayed(_approval("7", 100, 900, AGENT)) == "4" * 40
        on_line = _approval("5", 200, 200)
        other = _approval_identity(on_line, B)
        assert index._seen_approval(on_line, B, "b1") is None
        made = _seen_fields(index.approval_ids[other])[1]
        index._mark_lapsed(other, f"{'6' * 40} {_hand(side)}")
        assert _seen_fields(index.approval_ids[other]) == ("5" * 40, made, _hand(on_line), True)
    finally:
        index.close()


def test_a_lapse_takes_back_the_decision_whatever_commit_carries_it() -> None:
    """Round 65: her merge (or squash) of her approving branch reverted before the controller
    acted: the decision lapsed, not only the commit that carried it onto the line. The
    branch commit behind it (another author date and subject: another identity) or any copy
    of hers for that plan, version and status, dated not after the lapse, is a replay from
    another hand; her own hand, a decision of hers dated after the lapse, another version,
    status or author are not that decision (round 66: the plan's path is no part of it). The
    newest lapse is kept, with the dates of every commit that carried the decision."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import _decision_mark

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        mark = _decision_mark("Alice@Example.com", H1, "approved")
        merge = "m" * 40
        at = _approval("r", 500, 500)  # her revert of the merge, the lapse
        her = {"author": "alice@example.com"}  # her revert: her own lapse (round 66's dating)
        index._note_lapse({**her, "commit": merge, "decision": mark, "author_time": 400}, at)
        picked = _approval("x", 300, 900, AGENT)  # the agent's pick of her branch commit
        assert index._lapsed_decision(picked, mark) == merge
        assert index._lapsed_decision(_approval("y", 500, 900, GITHUB), mark) == merge
        assert index._lapsed_decision(_approval("z", 300, 900), mark) is None  # her own hand
        assert index._lapsed_decision(_approval("f", 501, 900, AGENT), mark) is None  # newer
        for other in (
            _decision_mark("alice@example.com", H2, "approved"),
            _decision_mark("alice@example.com", H1, "rejected"),
            _decision_mark("bob@example.com", H1, "approved"),
        ):
            assert index._lapsed_decision(picked, other) is None
        # a second lapse, later, covers her decision made between the two; an older one
        # recorded after it does not shorten it
        index._note_lapse({**her, "commit": "n" * 40, "decision": mark, "author_time": 600}, at)
        index._note_lapse({**her, "commit": "o" * 40, "decision": mark, "author_time": 0}, at)
        later = _approval("l", 700, 700)
        index._note_lapse({**her, "commit": "n" * 40, "decision": mark, "author_time": 600}, later)
        index._note_lapse({**her, "commit": "o" * 40, "decision": mark, "author_time": 0}, at)
        assert index._lapsed_decision(_approval("g", 650, 900, AGENT), mark) == "n" * 40
        assert index._lapsed_decision(_approval("c", 400, 900, AGENT), mark) == "n" * 40
    finally:
        index.close()


@pytest.mark.parametrize("picker", ["agent", "alice"])
@pytest.mark.parametrize("shape", ["merge", "squash"])
def test_her_revert_of_bobs_merge_takes_back_her_branch_commit(
    repo: Path, tmp_path: Path, shape: str, picker: str
) -> None:
    """Round 65 ``revm-bob``/``squash-bob``: Bob merges (or squashes) her approving branch,
    she reverts his commit before the controller acts; a pick of her branch commit is a
    replay from the agent's hand (``replay_of`` set), hers from her own (none)."""
    from controller.git.gitrepo import GitRepo
    from controller.git.history import HistoryIndex
    from tests.support.gitenv import identity
    from tests.support.gitkit import AGENT as AGENT_ID
    from tests.support.gitkit import ALICE as ALICE_ID
    from tests.support.gitkit import BOB as BOB_ID
    from tests.support.gitkit import commit_all, edit_status, git, write_plan

    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT_ID)
    git(repo, "checkout", "-q", "-b", "alice")
    edit_status(repo, "p", "approved")
    branch_commit = commit_all(repo, "lgtm", ALICE_ID)
    git(repo, "checkout", "-q", "main")
    if shape == "merge":
        git(repo, "merge", "-q", "--no-ff", "-m", "merge", "alice", env=identity(*BOB_ID))
        carried, how = git(repo, "rev-parse", "HEAD").strip(), ["-m", "1"]
    else:
        git(repo, "merge", "-q", "--squash", "alice", env=identity(*BOB_ID))
        carried, how = commit_all(repo, "squash alice", BOB_ID), []
    git(repo, "revert", "--no-edit", *how, carried, env=identity(*ALICE_ID))
    hand = AGENT_ID if picker == "agent" else ALICE_ID
    git(repo, "cherry-pick", branch_commit, env=identity(*hand))
    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
        request = index.plans["plans/p"].request
        assert request is not None
        assert (request["replay_of"] is not None) is (picker == "agent"), request
    finally:
        index.close()


@pytest.mark.parametrize(
    ("reverter", "merger", "how"),
    [
        ("alice", "bob", "no-ff"),
        ("alice", "bob", "octopus"),
        ("alice", "alice", "no-ff"),
        ("alice", "bob", "ff"),
        ("alice", "bob", "nested"),
        ("agent", "alice", "no-ff"),
        ("agent", "alice", "nested"),
        ("claimed", "alice", "no-ff"),
    ],
)
def test_a_merge_carries_a_lapse_and_does_not_date_it(
    repo: Path, reverter: str, merger: str, how: str
) -> None:
    """Round 71 ``h-noff``, ``h-octo``: a lapse is dated by the commit that made it, on the
    line or on a merged branch, never by the merge that brought it. Her revert on her branch,
    merged by Bob (``--no-ff``, an octopus, through a branch of his) or by herself, is dated
    by her committer date (her web-editor re-approval after it counts); the agent's revert
    (or one claiming her authorship) on its branch, whoever merges it, is another hand's
    (OPEN) even where her merge is dated after her other approval."""
    from controller.git.gitrepo import GitRepo
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import OPEN, _decision_mark, _lapse_fields
    from tests.support.gitenv import identity
    from tests.support.gitkit import AGENT as AGENT_ID
    from tests.support.gitkit import ALICE as ALICE_ID
    from tests.support.gitkit import BOB as BOB_ID
    from tests.support.gitkit import commit_all, edit_status, git, write_plan

    def at(when: int, who: tuple[str, str], author: tuple[str, str] | None = None) -> dict:
        env = identity(*who)
        if author is not None:
            env.update(GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1])
        return {**env, "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}

    people = {"alice": ALICE_ID, "bob": BOB_ID, "agent": AGENT_ID, "claimed": AGENT_ID}
    write_plan(repo, "p")
    commit_all(repo, "the agent writes a plan", AGENT_ID)
    edit_status(repo, "p", "approved")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lgtm", env=at(1000, ALICE_ID))
    approval = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "side")
    claim = ALICE_ID if reverter == "claimed" else None
    git(repo, "revert", "--no-edit", approval, env=at(1100, people[reverter], claim))
    git(repo, "checkout", "-q", "main")
    heads = ["side"]
    if how == "octopus":
        git(repo, "checkout", "-q", "-b", "docs")
        (repo / "NOTES").write_text("notes\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "notes", env=at(1150, BOB_ID))
        git(repo, "checkout", "-q", "main")
        heads.append("docs")
    if how == "nested":  # merged into Bob's branch first, then that branch into main
        git(repo, "checkout", "-q", "-b", "mid")
        (repo / "NOTES").write_text("notes\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "notes", env=at(1150, BOB_ID))
        git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", env=at(1160, BOB_ID))
        git(repo, "checkout", "-q", "main")
        heads = ["mid"]
    mode = ["--ff-only"] if how == "ff" else ["--no-ff", "-m", "merge"]
    git(repo, "merge", "-q", *mode, *heads, env=at(1200, people[merger]))
    index = HistoryIndex(
        None, plans_dir="plans", controller_email="bot@example.com", clock=lambda: 5000.0
    )
    try:
        index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
        state = index.plans["plans/p"]
        assert state.status != "approved" and state.hash is not None
        mark = _decision_mark(ALICE_ID[1], state.hash, "approved")
        when = _lapse_fields(index.approval_ids[mark])[1]
        assert when == (1100 if reverter == "alice" else OPEN), (when, index.approval_ids[mark])
    finally:
        index.close()


def test_a_lapsed_decision_follows_the_version_wherever_the_plan_moves() -> None:
    """Round 66 ``mv-reword``: the decision is her identity, the frozen version and the status
    it sets; a move keeps the frozen hash, so the agent's copy of her lapsed approval onto the
    moved folder (another subject: no identity of round 62) is that decision."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import _decision_mark

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        mark = _decision_mark("alice@example.com", H1, "approved")
        request = {"commit": "1" * 40, "decision": mark, "author_time": 100}
        index._note_lapse({**request, "author": "alice@example.com"}, _approval("r", 120, 120))
        moved = _decision_mark("alice@example.com", H1, "approved")  # plans/a-2, same bytes
        assert index._lapsed_decision(_approval("2", 100, 900, AGENT), moved) == "1" * 40
        assert index._lapsed_decision(_approval("3", 130, 900, GITHUB), moved) is None  # new
    finally:
        index.close()


def test_her_own_lapse_dated_ahead_is_dated_by_what_she_cannot_set() -> None:
    """Round 66 ``fast-web``: a lapse she committed herself is dated by its committer date
    (round 70: never by its author date), never past the reader's clock, and once a
    controller commit follows it never past that commit: her decision made after it in the
    forge's web editor counts, a copy of the commit that carried the lapsed one (its author
    date, however far ahead her clock ran) does not."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import _decision_mark, _lapse_fields

    now = [1000.0]
    index = HistoryIndex(
        None, plans_dir="plans", controller_email="bot@example.com", clock=lambda: now[0]
    )
    try:
        her = {"author": "alice@example.com"}
        # her laptop an hour fast: the carrier dated ahead of the lapse is still caught
        fast = _decision_mark("alice@example.com", H2, "approved")
        index._note_lapse(
            {**her, "commit": "2" * 40, "decision": fast, "author_time": 3900},
            _approval("s", 3880, 250),
        )
        assert _lapse_fields(index.approval_ids[fast])[1] == 250
        assert index._lapsed_decision(_approval("y", 3900, 950, AGENT), fast) == "2" * 40
        assert index._lapsed_decision(_approval("v", 400, 400, GITHUB), fast) is None
        # both dates ahead: the reader's clock (the controller's pass) bounds it, and a
        # controller commit after it lowers it, never raises it
        ahead = _decision_mark("alice@example.com", H1, "approved")
        lapse = {**her, "commit": "3" * 40, "decision": ahead, "author_time": 100}
        index._note_lapse(lapse, _approval("t", 10**10, 10**10))
        assert _lapse_fields(index.approval_ids[ahead])[1] == 1000
        index._controller_clock(1010)
        assert _lapse_fields(index.approval_ids[ahead])[1] == 1000
        index._note_lapse({**lapse, "decision": fast}, _approval("u", 10**10, 10**10))
        index._controller_clock(990)
        assert _lapse_fields(index.approval_ids[fast])[1] == 990
    finally:
        index.close()


@pytest.mark.parametrize(
    ("adate", "cdate"), [(10**10, 200), (5, 5), (5, 10**10), (10**10, 10**10), (1200, 1200)]
)
def test_another_hands_lapse_is_dated_by_the_controller_commit_after_it(
    adate: int, cdate: int
) -> None:
    """Round 67 (``early-other``, ``future-web``): a lapse someone else committed tells
    nothing about when it was made, its dates (ten years ahead, 1990, split, now) count
    neither way: until a controller commit follows it the reader's clock dates it (her
    other decision of the version, made before, is a replay from another hand; so is her
    web approval: refused once), then that commit's time, exactly (a rebuilt index reading
    it later agrees): a decision dated after it counts, whoever commits it."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import OPEN, _decision_mark, _lapse_fields

    now = [1000.0]
    index = HistoryIndex(
        None, plans_dir="plans", controller_email="bot@example.com", clock=lambda: now[0]
    )
    try:
        mark = _decision_mark("alice@example.com", H1, "approved")
        request = {"commit": "1" * 40, "decision": mark, "author_time": 100}
        index._note_lapse(
            {**request, "author": "alice@example.com"}, _approval("r", adate, cdate, AGENT)
        )
        assert _lapse_fields(index.approval_ids[mark])[1] == OPEN
        assert index._lapsed_decision(_approval("y", 150, 900, AGENT), mark) == "1" * 40
        assert index._lapsed_decision(_approval("w", 990, 990, GITHUB), mark) == "1" * 40
        assert index._lapsed_decision(_approval("a", 990, 990), mark) is None  # her own hand
        now[0] = 5000.0  # a rebuilt index or the audit, long after
        index._controller_clock(1010)
        assert _lapse_fields(index.approval_ids[mark])[1] == 1010
        assert index._lapsed_decision(_approval("w", 990, 990, GITHUB), mark) == "1" * 40
        assert index._lapsed_decision(_approval("n", 1020, 1020, GITHUB), mark) is None
        assert index._lapsed_decision(_approval("x", 100, 1030, AGENT), mark) == "1" * 40
    finally:
        index.close()


def test_her_old_revert_picked_by_another_hand_is_another_hands_lapse() -> None:
    """Round 67 ``pick-revert``: the agent's cherry-pick of her OLD revert (her author and
    author date, the agent's committer) as the lapse of her newer approval is the agent's
    lapse: its dates do not date it."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import OPEN, _decision_mark, _lapse_fields

    index = HistoryIndex(
        None, plans_dir="plans", controller_email="bot@example.com", clock=lambda: 1000.0
    )
    try:
        mark = _decision_mark("alice@example.com", H1, "approved")
        request = {"commit": "2" * 40, "decision": mark, "author_time": 300}
        index._note_lapse(
            {**request, "author": "Alice@Example.com"}, _approval("r", 120, 500, AGENT)
        )
        assert _lapse_fields(index.approval_ids[mark])[1] == OPEN
        assert index._lapsed_decision(_approval("y", 280, 600, AGENT), mark) == "2" * 40
    finally:
        index.close()


def test_an_open_lapse_is_kept_until_a_controller_commit_follows(tmp_path: Path) -> None:
    """The pass that saw another hand's lapse is not always the one that sees the
    controller commit after it: the open lapse is kept in the index between passes."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import _decision_mark, _lapse_fields

    def index_at() -> HistoryIndex:
        return HistoryIndex(
            tmp_path / "index.sqlite", plans_dir="plans", controller_email="bot@example.com",
            clock=lambda: 1000.0,
        )  # fmt: skip

    index = index_at()
    mark = _decision_mark("alice@example.com", H1, "approved")
    request = {"commit": "1" * 40, "decision": mark, "author_time": 100}
    index._note_lapse({**request, "author": "alice@example.com"}, _approval("r", 5, 5, AGENT))
    index.save("a" * 40)
    index.close()
    index = index_at()
    try:
        index._controller_clock(900)
        assert _lapse_fields(index.approval_ids[mark])[1] == 900
        assert index._lapsed_decision(_approval("n", 950, 950, GITHUB), mark) is None
    finally:
        index.close()


def _lapse(author: Person, committer: Person, adate: int, cdate: int) -> CommitRecord:
    """A commit setting the plan away from ``approved``: ``author``'s, committed by
    ``committer`` (git keeps the author and author date through a pick, ``am``, a rebase)."""
    return CommitRecord("r" * 40, ("b" * 40,), author, committer, adate, cdate, "revert")


@pytest.mark.parametrize("committer", ["alice@example.com", "ALICE@EXAMPLE.COM"])
def test_her_lapse_of_another_authors_commit_is_dated_by_her_committer_date(
    committer: str,
) -> None:
    """Round 68 (``her-pick``, ``her-am``, ``her-rebase``), round 69 (``cdi-rebase``,
    ``cdi-am``) and round 70: the agent's revert dated 1990, brought onto the branch by
    Alice's own cherry-pick, ``am`` or rebase. She committed it: her committer date is her
    word and dates the lapse; the agent's author date never does. A committer date that is
    a copy of the agent's author date (``--committer-date-is-author-date``: 1990 in both) is
    the agent's word: another hand's lapse, dated by the controller commit after it. Her
    other decision of the version made before the lapse is the lapsed one from another
    hand, one made after it is new."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import OPEN, _decision_mark, _lapse_fields

    index = HistoryIndex(
        None, plans_dir="plans", controller_email="bot@example.com", clock=lambda: 1000.0
    )
    try:
        her = {"commit": "1" * 40, "author_time": 100, "author": ALICE.email}
        hand = Person("Alice", committer)
        picked = _decision_mark("alice@example.com", H1, "approved")
        index._note_lapse({**her, "decision": picked}, _lapse(AGENT, hand, 5, 700))
        assert _lapse_fields(index.approval_ids[picked])[1] == 700
        assert index._lapsed_decision(_approval("y", 600, 600, AGENT), picked) == "1" * 40
        assert index._lapsed_decision(_approval("n", 800, 800, GITHUB), picked) is None
        cdi = _decision_mark("alice@example.com", H2, "approved")
        index._note_lapse({**her, "decision": cdi}, _lapse(AGENT, hand, 5, 5))
        assert _lapse_fields(index.approval_ids[cdi])[1] == OPEN
        assert index._lapsed_decision(_approval("y", 600, 600, AGENT), cdi) == "1" * 40
        assert index._lapsed_decision(_approval("n", 800, 800, GITHUB), cdi) == "1" * 40
        index._controller_clock(900)
        assert _lapse_fields(index.approval_ids[cdi])[1] == 900
        assert index._lapsed_decision(_approval("n", 800, 800, GITHUB), cdi) == "1" * 40
        assert index._lapsed_decision(_approval("m", 950, 950, GITHUB), cdi) is None
    finally:
        index.close()


@pytest.mark.parametrize(
    "claimed", [ALICE, Person("Alice", "alice+bot@example.com"), Person("A", "Alice@Example.com")]
)
def test_a_claimed_author_never_dates_her_lapse(claimed: Person) -> None:
    """Round 70 (``fa-pick``, ``fa-amend``, ``fa-rebase``, ``fa-am``, ``fa-plus``): the
    agent's revert written with HER name as author (``--author``, a plus tag of hers), both
    dates 1990, brought in by her own pick, amend, rebase or ``am``. The author field is a
    claim anyone writes: the lapse is dated by her committer date (now), never by the
    claimed author date, so her decision of the version made before she brought it in is
    the lapsed one. Her own revert amended later is dated by the amend: later, it costs only
    her. With both dates 1990 (``--committer-date-is-author-date`` over a commit claiming her
    authorship) git holds nothing to tell it from her own commit of 1990: the accepted limit
    (docs/threat-model.md), dated 1990."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import _decision_mark, _lapse_fields
    from controller.settings import IdentityAliases

    index = HistoryIndex(
        None, plans_dir="plans", controller_email="bot@example.com", clock=lambda: 1000.0
    )
    index.identity_aliases = IdentityAliases(plus_tags=["*@example.com"], people=[])
    try:
        her = {"commit": "1" * 40, "author_time": 100, "author": ALICE.email}
        mark = _decision_mark("alice@example.com", H1, "approved")
        index._note_lapse({**her, "decision": mark}, _lapse(claimed, ALICE, 5, 700))
        assert _lapse_fields(index.approval_ids[mark])[1] == 700
        assert index._lapsed_decision(_approval("y", 600, 600, AGENT), mark) == "1" * 40
        assert index._lapsed_decision(_approval("n", 800, 800, GITHUB), mark) is None
        limit = _decision_mark("alice@example.com", H2, "approved")
        index._note_lapse({**her, "decision": limit}, _lapse(claimed, ALICE, 5, 5))
        assert _lapse_fields(index.approval_ids[limit])[1] == 5
    finally:
        index.close()


@pytest.mark.parametrize("spelled", ["a.smith@corp.example", "alice+laptop@example.com"])
def test_her_lapse_under_an_alias_is_her_own(spelled: str) -> None:
    """Round 68 (``alias-self``, ``plus-self``): her revert committed as an address the
    config makes hers (``identity_aliases``: a person's other address, a plus tag) is her
    own lapse, dated by its committer date (round 70: her word, the author date never), as
    approvals compare identities: her web-editor re-approval after it counts. Without the
    aliases it is another hand's (OPEN)."""
    from controller.git.history import HistoryIndex
    from controller.git.lifecycle import OPEN, _decision_mark, _lapse_fields
    from controller.settings import IdentityAliases

    index = HistoryIndex(
        None, plans_dir="plans", controller_email="bot@example.com", clock=lambda: 1000.0
    )
    try:
        me = Person("A. Smith", spelled)
        mark = _decision_mark("alice@example.com", H1, "approved")
        her = {"commit": "1" * 40, "decision": mark, "author_time": 100, "author": ALICE.email}
        index._note_lapse(her, _lapse(me, me, 500, 520))
        assert _lapse_fields(index.approval_ids[mark])[1] == OPEN
        index.identity_aliases = IdentityAliases(
            plus_tags=["*@example.com"], people=[["alice@example.com", "a.smith@corp.example"]]
        )
        mark = _decision_mark("alice@example.com", H2, "approved")
        index._note_lapse({**her, "decision": mark}, _lapse(me, me, 500, 520))
        assert _lapse_fields(index.approval_ids[mark])[1] == 520
        assert index._lapsed_decision(_approval("w", 600, 600, GITHUB), mark) is None
        assert index._lapsed_decision(_approval("o", 450, 600, GITHUB), mark) == "1" * 40
        assert index._own_hand(_approval("p", 450, 600, me))  # her pick as her alias
    finally:
        index.close()
