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
