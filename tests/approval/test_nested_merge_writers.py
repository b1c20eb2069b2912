"""A merge that only combines its parents' versions writes nothing, at any depth (round 126,
atk126a, ``inner-merger-counted-as-writer``).

The agent's plan on a branch merged ``--no-ff`` by Bob into an integration branch, which Bob
merged ``--no-ff`` into main: the INNER merge, listed among the commits the outer merge brought
and shown against its own first parent (which lacked the plan), was read as the plan's writing,
and Bob's approval was ``E_SELF_APPROVAL``; so was his approval of the agent's plan whose copy
(by Mallory) such a branch carried, since the copy's content is the same. Now every commit a
merged branch's log lists is asked the one rule (``Lifecycle._wrote_content``, ``_made_by``): a
merge wrote only content none of its parents held that it did not bring (no side's blob, no
clean join of git's, no hands-off settlement). A merge that writes new bytes by hand is still
its merger's writing, and the commits on the innermost branch keep their makers as writers.
The controller, ``plangate check --as`` and a fresh clone's ``plangate audit`` read the one
history index, so they agree."""

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
    MALLORY,
    edit_status,
    status_row,
    write_plan,
)

CAROL = ("Carol", "carol@ops.example.com")
CONFIG = """\
repo: repo
approval:
  approvers: ["alice@example.com", "*@ops.example.com"]
tools:
  greet: {kind: echo}
"""


def _row(repo: Path, slug: str = "greet") -> dict[str, Any]:
    return status_row(repo, slug)


def _merge(repo: Path, into: str, branch: str, who: tuple[str, str], *extra: str) -> None:
    git(repo, "checkout", "-q", into)
    git(repo, "merge", "-q", "--no-ff", *extra, "-m", f"merge {branch}", branch, env=identity(*who))


def _note(repo: Path, name: str) -> None:
    """The agent's note outside every plan folder (the integration branch's own commit)."""
    (repo / f"{name}.txt").write_text(f"{name}\n")
    commit_all(repo, f"agent: {name}", AGENT)


def _nest(repo: Path, depth: int) -> None:
    """Branches ``lvl<depth-1>`` ... ``lvl0`` forked one from the other (each with a note of
    the agent's), the innermost checked out; :func:`_unnest` merges them back."""
    base = "main"
    for level in range(depth - 1, -1, -1):
        git(repo, "checkout", "-q", "-b", f"lvl{level}", base)
        _note(repo, f"note{level}")
        base = f"lvl{level}"


def _unnest(repo: Path, depth: int, mergers: list[tuple[str, str]]) -> None:
    """``lvl0`` merged ``--no-ff`` into ``lvl1``, ... the outermost into main: ``mergers``,
    innermost first."""
    for level in range(depth):
        into = f"lvl{level + 1}" if level + 1 < depth else "main"
        _merge(repo, into, f"lvl{level}", mergers[level])


def _approve(repo: Path, who: tuple[str, str], slug: str = "greet") -> None:
    edit_status(repo, slug, "approved")
    commit_all(repo, f"{who[0]}: approve {slug}", who)


def _check(repo: Path, who: tuple[str, str], slug: str = "greet") -> dict[str, Any]:
    """``plangate check --as <who>`` of ``who``'s approval on a branch ``ap`` (left there)."""
    git(repo, "checkout", "-q", "-b", "ap", "main")
    _approve(repo, who, slug)
    config = repo.parent / "plangate.yml"
    config.write_text(CONFIG)
    told = run_cli(
        "check", "--config", str(config), "--base", "main", "--head", "ap",
        "--as", who[1], "--format", "json", cwd=repo,
    )  # fmt: skip
    assert told.stdout.strip(), told.stderr
    git(repo, "checkout", "-q", "main")
    return {p["plan"]: p for p in json.loads(told.stdout)["plans"]}[f"plans/{slug}"]


def _land_approval(repo: Path) -> dict[str, Any]:
    git(repo, "merge", "-q", "--ff-only", "ap")
    return _row(repo)


def _audit_valid(repo: Path, slug: str = "greet") -> int:
    """Valid starts of the plan in ``plangate audit --json`` of a fresh clone."""
    clone = repo.parent / "clone" / "repo"
    shutil.rmtree(clone.parent, ignore_errors=True)
    clone.parent.mkdir()
    git(repo, "clone", "-q", str(repo), str(clone))
    (clone.parent / "plangate.yml").write_text(CONFIG)
    shutil.rmtree(default_state_dir(clone), ignore_errors=True)
    result = run_cli("audit", "--json", "--config", str(clone.parent / "plangate.yml"))
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    return len(
        [
            e
            for e in report.get("executions", [])
            if e.get("plan") == f"plans/{slug}" and e.get("approval_valid")
        ]
    )


def _runs(repo: Path, approver: tuple[str, str]) -> None:
    """``approver``'s approval: ``check`` predicts a start, the controller runs it once, and
    the fresh-clone audit calls that run valid."""
    told = _check(repo, approver)
    assert told.get("outcome") == "start", told
    row = _land_approval(repo)
    assert row.get("status") == "completed", row
    assert _audit_valid(repo) == 1


def _refused_self(repo: Path, approver: tuple[str, str]) -> None:
    """``approver``'s approval is ``E_SELF_APPROVAL`` for ``check`` and the controller."""
    told = _check(repo, approver)
    assert told.get("outcome") != "start" and "E_SELF_APPROVAL" in json.dumps(told), told
    row = _land_approval(repo)
    assert row.get("status") == "pending_approval", row
    assert f"E_SELF_APPROVAL: {approver[1]}" in json.dumps(row), row
    assert _audit_valid(repo) == 0


@pytest.mark.parametrize(
    ("depth", "mergers", "approver"),
    [
        (2, [BOB, BOB], BOB),
        (2, [CAROL, BOB], CAROL),
        (2, [CAROL, BOB], BOB),
        (3, [BOB, CAROL, ALICE], BOB),
        (3, [ALICE, CAROL, BOB], CAROL),
    ],
    ids=["bob-bob", "inner-carol", "outer-bob", "depth3-innermost", "depth3-middle"],
)
def test_a_merger_of_a_merged_branch_writes_nothing(
    repo: Path, depth: int, mergers: list[tuple[str, str]], approver: tuple[str, str]
) -> None:
    """The agent's plan on the innermost branch of a merge of a merge (of a merge): no
    merger is its writer, and each one's approval runs it."""
    _nest(repo, depth)
    write_plan(repo)
    commit_all(repo, "agent: a plan", AGENT)
    _unnest(repo, depth, mergers)
    row = _row(repo)
    assert row.get("status") == "pending_approval", row
    _runs(repo, approver)


def test_a_copy_carried_by_a_merge_of_a_merge_gives_its_mergers_nothing(repo: Path) -> None:
    """The agent's plan on main; Mallory's copy of its bytes on a branch that Bob merges into
    an integration branch he merges into main: Bob is no writer of the content, and his
    approval of the agent's plan runs."""
    write_plan(repo)
    commit_all(repo, "agent: a plan", AGENT)
    assert _row(repo).get("status") == "pending_approval"
    _nest(repo, 2)
    write_plan(repo, "greet-m")
    commit_all(repo, "mallory: the same bytes", MALLORY)
    _unnest(repo, 2, [BOB, BOB])
    _row(repo)
    _runs(repo, BOB)


def test_an_octopus_merge_inside_a_merge_writes_nothing(repo: Path) -> None:
    """Bob's octopus merge of the agent's plan branch and a note branch into an integration
    branch, merged ``--no-ff`` into main by Bob: his approval runs the plan."""
    _nest(repo, 1)  # lvl0, the integration branch
    for branch, act in (("plan", "plan"), ("other", "other")):
        git(repo, "checkout", "-q", "-b", branch, "lvl0")
        if act == "plan":
            write_plan(repo)
            commit_all(repo, "agent: a plan", AGENT)
        else:
            _note(repo, "other")
    git(repo, "checkout", "-q", "lvl0")
    git(repo, "merge", "-q", "--no-ff", "-m", "octopus", "plan", "other", env=identity(*BOB))
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 3
    _merge(repo, "main", "lvl0", BOB)
    assert _row(repo).get("status") == "pending_approval"
    _runs(repo, BOB)


def test_an_inner_merge_that_writes_new_content_is_its_mergers(repo: Path) -> None:
    """Bob's inner merge adds a param of his own to the agent's plan (``--no-commit``, new
    content no parent held): he wrote that version, and his approval of it is refused."""
    _nest(repo, 2)
    write_plan(repo)
    commit_all(repo, "agent: a plan", AGENT)
    git(repo, "checkout", "-q", "lvl1")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "lvl0", env=identity(*BOB))
    path = repo / "plans" / "greet" / "PLAN.yml"
    path.write_text(path.read_text().replace("Say hello to the world", "Say hello to Bob"))
    commit_all(repo, "merge lvl0", BOB)
    _merge(repo, "main", "lvl1", CAROL)
    assert _row(repo).get("status") == "pending_approval"
    _refused_self(repo, BOB)


def test_the_writer_on_the_inner_branch_stays_one(repo: Path) -> None:
    """Alice writes the plan on the innermost branch; Bob merges both levels: Alice, its
    writer, may not approve it (and Bob's merges take nothing from that)."""
    _nest(repo, 2)
    write_plan(repo)
    commit_all(repo, "alice: a plan", ALICE)
    _unnest(repo, 2, [BOB, BOB])
    assert _row(repo).get("status") == "pending_approval"
    _refused_self(repo, ALICE)


def test_a_twin_removed_inside_a_merge_of_a_merge_leaves_its_mergers_no_writers(
    repo: Path,
) -> None:
    """The agent's plan held ``E_PLAN_AMBIGUOUS`` by its own twin ``PLAN.yaml``; the agent
    removes the twin on a branch that Bob merges into an integration branch he merges into
    main (the release): Bob is no writer of the plan, and his approval runs it."""
    write_plan(repo)
    commit_all(repo, "agent: a plan", AGENT)
    _row(repo)
    twin = repo / "plans" / "greet" / "PLAN.yaml"
    twin.write_text((repo / "plans" / "greet" / "PLAN.yml").read_text())
    commit_all(repo, "agent: a twin", AGENT)
    assert "E_PLAN_AMBIGUOUS" in json.dumps(_row(repo))
    _nest(repo, 2)
    twin.unlink()
    commit_all(repo, "agent: the twin removed", AGENT)
    _unnest(repo, 2, [BOB, BOB])
    row = _row(repo)
    assert row.get("status") == "pending_approval" and row.get("problem") is None, row
    _runs(repo, BOB)
