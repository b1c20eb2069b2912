"""What an approving commit binds itself to (SPEC §5): a commit that names the plans it
approves (``plangate approve``'s ``Plan:``/``Plan-Hash:`` trailers, ``Plan-Approved:``)
approves only those; prose that happens to start with ``Plan:`` names nothing."""

from __future__ import annotations

import pytest

from controller.git.gitrepo import Person
from controller.git.lifecycle import _binding
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


A1, A2, B2, B3 = (f"plans/{p}\0approved\0{v}" for p, v in ("a1", "a2", "b2", "b3"))


def test_an_approval_brought_back_for_another_version_is_a_replay() -> None:
    from controller.git.history import HistoryIndex

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        first = _approval("1", 100, 100)
        assert index._seen_approval(first, A1, "v1") is None
        assert index._seen_approval(first, A1, "v2") is None  # the same commit
        assert index._seen_approval(_approval("2", 100, 100), A1, "v1") is None
        # the same decision cherry-picked (a new committer date) for another pause: a replay
        assert index._seen_approval(_approval("3", 100, 700), A1, "v2") == "1" * 40
        # a fresh commit in the same second with the same subject (a gate approved at once)
        assert index._seen_approval(_approval("4", 100, 100), A1, "v2") is None
        # carried onto another version or plan by someone else (a cherry-pick onto version
        # 2, ``git am --directory``, a merge re-created by ``merge -C`` or ``rebase -r`` over
        # the agent's branch): a replay too (rounds 4, 6, 18)
        assert index._seen_approval(_approval("5", 100, 700, AGENT), A2, "v2") == "1" * 40
        assert index._seen_approval(_approval("5", 100, 700, AGENT), B2, "v2") == "1" * 40
        # a fresh commit for another plan in the same second, with the same subject: its own
        assert index._seen_approval(_approval("6", 100, 100), B3, "v3") is None
    finally:
        index.close()


def test_her_own_decisions_in_one_second_are_no_replays_of_each_other() -> None:
    """Round 60: two plans approved in one second with one stock subject, then ``git pull
    --rebase`` (both committer dates moved, both committed by her): two decisions, two
    approvals. The same decision brought back for another pause still is a replay."""
    from controller.git.history import HistoryIndex

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        assert index._seen_approval(_approval("1", 100, 140), A1, "a") is None
        assert index._seen_approval(_approval("2", 100, 141), B2, "b") is None
        assert index._replayed(_approval("3", 100, 142)) is None  # her rejection of a third
        assert index._replayed(_approval("4", 100, 143, AGENT)) == "1" * 40  # re-created
        assert index._seen_approval(_approval("5", 100, 144), B2, "b-gate") == "2" * 40
    finally:
        index.close()
