"""A producer's withdrawal of her own plan withdraws that plan and vetoes its version as a
plan of hers (a copy, a re-add, a parent she wrote pinning it: ``E_VERSION_WITHDRAWN``), but
does not refuse a parent someone else wrote that pins it; an allowed approver's rejection of
the version binds every parent pinning it (round 120, child-author-vetoes-pinning-parent;
round 37's ``reject-child``: the writer of a pinned child may not withdraw the parent). The
agent's pending library, pinned by Dave's parent, rejected by the agent: Bob's approval of
the parent was refused ``E_VERSION_WITHDRAWN ... plans/lib (pinned as ...) was set rejected
by agent@example.com``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.gitenv import commit_all, run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    controller,
    edit_status,
    head_plan,
    subjects,
    write_plan,
)
from tests.support.plantext import greet_plan

DAVE = ("Dave", "dave@example.com")
LIBRARY = greet_plan("Library", "The shared greeting", '"library"')
PIN = """\
  - id: 2
    plan: {{path: plans/lib, hash: "{digest}"}}
    why: "the library"
"""


def _rows(repo: Path) -> dict[str, dict[str, Any]]:
    """One controller pass, then the status rows by plan."""
    with controller(repo) as ctl:
        ctl.run_once()
        return {str(r["plan"]): r for r in ctl.status(reasons=True)}


def _set(repo: Path, slug: str, status: str, who: tuple[str, str]) -> None:
    edit_status(repo, slug, status)
    commit_all(repo, f"{who[0]}: {status} {slug}", who)


def _library_and_parent(repo: Path, parent_by: tuple[str, str]) -> None:
    """The agent's pending library (frozen), and ``parent_by``'s parent pinning it."""
    write_plan(repo, "lib", LIBRARY)
    commit_all(repo, "agent: a library", AGENT)
    digest = run_cli("hash", "plans/lib", cwd=repo).stdout.split()[-1]
    parent = greet_plan("Parent", "Greet, then the library", '"parent"') + PIN.format(digest=digest)
    write_plan(repo, "parent", parent)
    commit_all(repo, "a parent pinning the library", parent_by)
    rows = _rows(repo)
    assert rows["plans/lib"]["status"] == rows["plans/parent"]["status"] == "pending_approval"


def _refusal(repo: Path) -> str:
    return json.dumps(head_plan(repo, "parent").get("approval") or {})


def _parent_ran(repo: Path) -> bool:
    return any(s.startswith("plangate: start plans/parent") for s in subjects(repo))


def test_the_library_authors_rejection_leaves_someone_elses_parent_alone(repo: Path) -> None:
    """The agent rejects its own pending library: the library is rejected (its own approval
    and a copy of it are refused), yet Bob's approval of Dave's parent pinning that version
    runs the parent, the library's action with it."""
    _library_and_parent(repo, DAVE)
    _set(repo, "lib", "rejected", AGENT)
    assert _rows(repo)["plans/lib"]["status"] == "rejected"
    _set(repo, "parent", "approved", BOB)
    row = _rows(repo)["plans/parent"]
    assert row["status"] == "completed", (row, _refusal(repo))
    assert _parent_ran(repo)
    done = head_plan(repo, "parent")["execution"]["actions"]
    ran = [a["id"] for a in done if a.get("status") == "succeeded"]
    assert ran == [1, 2, "2/1"], done  # the library's action ran, nested in action 2
    write_plan(repo, "lib-2", LIBRARY)  # the vetoed version again, as a plan of its own
    commit_all(repo, "agent: the library again", AGENT)
    _rows(repo)
    _set(repo, "lib-2", "approved", BOB)
    row = _rows(repo)["plans/lib-2"]
    assert row["status"] == "pending_approval", row
    assert head_plan(repo, "lib-2")["approval"]["code"] == "E_VERSION_WITHDRAWN"


@pytest.mark.parametrize(
    ("rejecter", "parent_by"),
    [(ALICE, DAVE), (AGENT, AGENT)],
    ids=["approver", "authors-own-parent"],
)
def test_a_vetoed_library_still_refuses_the_parents_it_binds(
    repo: Path, rejecter: tuple[str, str], parent_by: tuple[str, str]
) -> None:
    """Alice (an approver) rejects the library: every parent pinning it is refused. The
    agent rejects its library and the parent is its own (round 23: its own pin): refused."""
    _library_and_parent(repo, parent_by)
    _set(repo, "lib", "rejected", rejecter)
    _set(repo, "parent", "approved", BOB)
    row = _rows(repo)["plans/parent"]
    assert row["status"] == "pending_approval", row
    assert "E_VERSION_WITHDRAWN" in _refusal(repo), _refusal(repo)
    assert "pinned as plans/lib" in _refusal(repo), _refusal(repo)
    assert not _parent_ran(repo)


def test_an_approvers_rejection_after_the_authors_binds_every_parent(repo: Path) -> None:
    """The agent rejects its library first (its veto binds no one else's parent); then Alice
    rejects a pending copy of that very version: Dave's parent is refused, naming Alice."""
    _library_and_parent(repo, DAVE)
    _set(repo, "lib", "rejected", AGENT)
    write_plan(repo, "lib-2", LIBRARY)
    commit_all(repo, "agent: the library again", AGENT)
    _rows(repo)
    _set(repo, "lib-2", "rejected", ALICE)
    _set(repo, "parent", "approved", BOB)
    row = _rows(repo)["plans/parent"]
    assert row["status"] == "pending_approval", row
    assert f"by {ALICE[1]}" in _refusal(repo), _refusal(repo)
    assert not _parent_ran(repo)
