"""What history showed that a rewrite can erase lives apart from the index (round 27).

The history index (``index.sqlite``) is a cache of git: deleting it is safe, the next scan
rebuilds it. Every content's authors, the approvals seen, the versions withdrawn and each
version's first freeze are not in git any more once a rewrite erased them, so they live in
the memory file (``memory.sqlite`` in the state directory): a rebuilt index keeps them, and
an index of the layout before (those tables inside it) moves its rows there.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from controller.git import lifecycle
from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from tests.support.gitkit import AGENT, BOB, PLAN, commit_all, git, write_plan
from tests.support.plantext import greet_plan


def _index(tmp_path: Path) -> HistoryIndex:
    return HistoryIndex(
        tmp_path / "index.sqlite",
        plans_dir="plans",
        controller_email="plangate@localhost",
        memory=tmp_path / "memory.sqlite",
    )


def test_a_deleted_index_keeps_the_writers_of_erased_history(repo: Path, tmp_path: Path) -> None:
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    plan_hash = index.plans["plans/greet"].hash
    assert plan_hash is not None and "agent@example.com" in index.authors[plan_hash]
    index.close()

    git(repo, "reset", "-q", "--hard", "HEAD~1")  # the agent's commit erased
    for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
        (tmp_path / name).unlink(missing_ok=True)  # "always safe": a cache
    index = _index(tmp_path)
    assert index.plans == {}  # nothing of the plan in git any more
    assert "agent@example.com" in index.authors[plan_hash]  # but its writer is remembered
    index.close()


def test_an_index_of_the_layout_before_moves_its_memory(tmp_path: Path) -> None:
    old = sqlite3.connect(tmp_path / "index.sqlite")
    old.executescript(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
        "CREATE TABLE authors(hash TEXT PRIMARY KEY, data TEXT);"
        "CREATE TABLE withdrawn(hash TEXT PRIMARY KEY, data TEXT);"
        "INSERT INTO meta VALUES('version', '10');"
        "INSERT INTO authors VALUES('sha256:aa', '[\"carol@example.com\"]');"
        "INSERT INTO withdrawn VALUES('sha256:bb', '{\"by\": \"bob@example.com\"}');"
    )
    old.commit()
    old.close()

    index = _index(tmp_path)
    assert index.authors["sha256:aa"] == frozenset({"carol@example.com"})
    assert "sha256:bb" in index.withdrawn
    index.close()
    tables = {
        name
        for (name,) in sqlite3.connect(tmp_path / "index.sqlite").execute(
            "SELECT name FROM sqlite_master WHERE type='table'"
        )
    }
    assert "authors" not in tables and "withdrawn" not in tables  # moved, not copied
    memory = sqlite3.connect(tmp_path / "memory.sqlite")
    assert list(memory.execute("SELECT hash FROM authors")) == [("sha256:aa",)]


def _swap(repo: Path, tmp_path: Path, budget: int, monkeypatch: pytest.MonkeyPatch) -> HistoryIndex:
    """Bob writes plans a0..a2; the agent's one commit removes them and adds b0..b2, plans
    of the same shape with other values (round 55: pairs are judged by content, so comment
    lines no longer make two plans unlike)."""
    for i in range(3):
        write_plan(repo, f"a{i}", PLAN.replace("greet", f"alpha{i}"))
    commit_all(repo, "bob's plans", BOB)
    for i in range(3):
        git(repo, "rm", "-q", "-r", f"plans/a{i}")
        lines = "".join(f"# note {i} {n}\n" for n in range(40))
        theirs = greet_plan(f"Beta {i}", f"Wave at team {i}", f"team{i}")
        write_plan(repo, f"b{i}", lines + theirs.replace("greet", f"beta{i}"))
    commit_all(repo, "swap", AGENT)
    monkeypatch.setattr(lifecycle, "PAIR_BUDGET", budget)
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    return index


def test_a_swap_of_plans_past_the_budget_carries_every_removed_writer(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 31: a commit removing N plans and adding N others compared every pair (80
    swapped 300 KB plans: an 80 s pass). Within the budget dissimilar plans carry nothing;
    past it, an added plan whose likest source was not found carries the writers of every
    removed folder left (the safe direction: none of them may approve it)."""
    index = _swap(repo, tmp_path, 0, monkeypatch)
    for i in range(3):
        plan_hash = index.plans[f"plans/b{i}"].hash
        assert plan_hash is not None and BOB[1] in index.authors[plan_hash]
    index.close()


def test_a_swap_within_the_budget_carries_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _swap(repo, tmp_path, lifecycle.PAIR_BUDGET, monkeypatch)
    for i in range(3):
        plan_hash = index.plans[f"plans/b{i}"].hash
        assert plan_hash is not None and BOB[1] not in index.authors[plan_hash]
    index.close()
