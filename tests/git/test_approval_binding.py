"""What an approving commit binds itself to (SPEC §5): a commit that names the plans it
approves (``plangate approve``'s ``Plan:``/``Plan-Hash:`` trailers, ``Plan-Approved:``)
approves only those; prose that happens to start with ``Plan:`` names nothing."""

from __future__ import annotations

import pytest

from controller.git.gitrepo import Person
from controller.git.lifecycle import _binding
from controller.git.records import CommitRecord

ALICE = Person("Alice", "alice@example.com")
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


def _approval(sha: str, author_time: int, commit_time: int) -> CommitRecord:
    return CommitRecord(sha * 40, ("b" * 40,), ALICE, ALICE, author_time, commit_time, "approve")


def test_an_approval_brought_back_for_another_version_is_a_replay() -> None:
    from controller.git.history import HistoryIndex

    index = HistoryIndex(None, plans_dir="plans", controller_email="bot@example.com")
    try:
        first = _approval("1", 100, 100)
        assert index._seen_approval(first, "plans/a", "v1") is None
        assert index._seen_approval(first, "plans/a", "v2") is None  # the same commit
        assert index._seen_approval(_approval("2", 100, 100), "plans/a", "v1") is None
        # cherry-picked (a new committer date) onto another version or pause: a replay
        assert index._seen_approval(_approval("3", 100, 700), "plans/a", "v2") == "1" * 40
        # a fresh commit in the same second with the same subject (a gate approved at once)
        assert index._seen_approval(_approval("4", 100, 100), "plans/a", "v2") is None
        # brought back for another plan (a merge re-created by ``merge -C`` or ``rebase -r``
        # over the agent's branch): a replay too (round 18)
        assert index._seen_approval(_approval("5", 100, 700), "plans/b", "v2") == "1" * 40
        # a fresh commit for another plan in the same second, with the same subject: its own
        assert index._seen_approval(_approval("6", 100, 100), "plans/b", "v3") is None
    finally:
        index.close()
