"""The writers of every version the index has held are kept by its content hash (round 74,
r74copies): a plan a commit writes holding a content held before, at any path, in any version
since, takes them (``Lifecycle._key_versions``, ``_took_content``; ``version_key``), and so
does a plan the controller converts from a source of that content (round 75, r75convert:
``Lifecycle._converted``). Read from history alone: a whole scan, one commit at a time, and a
reloaded index agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.git.planstate import folder_key, version_key
from controller.plan import yamlio
from tests.support.gitkit import AGENT, BOB, PLAN, commit_all, git, run_once, write_plan

BOB_EMAIL = BOB[1]
SOURCE, COPY = "plans/greet", "plans/copy"


def _index(tmp_path: Path, name: str) -> HistoryIndex:
    return HistoryIndex(tmp_path / name, plans_dir="plans", controller_email="plangate@localhost")


def _scan(repo: Path, tmp_path: Path, one_by_one: bool) -> HistoryIndex:
    name = "steps.sqlite" if one_by_one else "whole.sqlite"
    index, gitrepo = _index(tmp_path, name), GitRepo(repo)
    line = git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    for sha in line if one_by_one else line[-1:]:
        index.scan(gitrepo, sha)
    index.close()
    return _index(tmp_path, name)  # reloaded: the keys were saved


def _agent_plan_with_bobs_note(repo: Path) -> bytes:
    data = write_plan(repo).read_bytes()
    commit_all(repo, "agent plan", AGENT)
    (repo / SOURCE / "NOTES.md").write_text("bob: a note\n")
    commit_all(repo, "bob: note", BOB)
    return data


def _write(repo: Path, path: str, data: bytes) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_bytes(data)


def _older(repo: Path, v1: bytes) -> None:
    _write(repo, f"{SOURCE}/PLAN.yml", v1.replace(b"to the world", b"to the world, v2", 1))
    commit_all(repo, "agent: v2", AGENT)
    _write(repo, f"{COPY}/PLAN.yml", v1)
    commit_all(repo, "agent: v1 copied", AGENT)


def _deleted(repo: Path, v1: bytes) -> None:
    git(repo, "rm", "-r", "-q", SOURCE)
    commit_all(repo, "agent: removed", AGENT)
    _write(repo, f"{COPY}/PLAN.yml", v1)
    commit_all(repo, "agent: written anew", AGENT)


def _crlf(repo: Path, v1: bytes) -> None:
    _write(repo, f"{COPY}/PLAN.yml", v1.replace(b"\n", b"\r\n"))
    commit_all(repo, "agent: copied with CRLF", AGENT)


ROUTES = {"older": _older, "deleted": _deleted, "crlf": _crlf}


@pytest.mark.parametrize("one_by_one", [False, True], ids=["whole", "one-by-one"])
@pytest.mark.parametrize("route", list(ROUTES))
def test_a_plan_holding_a_held_content_takes_its_holders_writers(
    repo: Path, tmp_path: Path, route: str, one_by_one: bool
) -> None:
    v1 = _agent_plan_with_bobs_note(repo)
    ROUTES[route](repo, v1)
    index = _scan(repo, tmp_path, one_by_one)
    copy = index.plans[COPY]
    assert copy.hash is not None
    assert BOB_EMAIL in index.authors.get(version_key(copy.hash), frozenset())
    assert BOB_EMAIL in copy.changers
    # carried as a copy's: into its folder too (what a parent pinning it counts, round 23)
    assert BOB_EMAIL in index.authors.get(folder_key(COPY), frozenset())


def test_a_later_version_keeps_the_folders_writers_of_its_own(repo: Path, tmp_path: Path) -> None:
    """A note written while v2 is held keys v2's content, not v1's: a copy of v1 made of the
    agent's bytes alone takes nobody but its writers then."""
    v1 = write_plan(repo).read_bytes()
    commit_all(repo, "agent plan", AGENT)
    _write(repo, f"{SOURCE}/PLAN.yml", v1.replace(b"to the world", b"to the world, v2", 1))
    commit_all(repo, "agent: v2", AGENT)
    (repo / SOURCE / "NOTES.md").write_text("bob: a note\n")
    commit_all(repo, "bob: note on v2", BOB)
    _write(repo, f"{COPY}/PLAN.yml", v1)
    commit_all(repo, "agent: v1 copied", AGENT)
    index = _scan(repo, tmp_path, one_by_one=True)
    source, copy = index.plans[SOURCE], index.plans[COPY]
    assert source.hash is not None and copy.hash is not None
    assert BOB_EMAIL in index.authors.get(version_key(source.hash), frozenset())
    assert BOB_EMAIL not in index.authors.get(version_key(copy.hash), frozenset())
    assert BOB_EMAIL not in copy.changers


@pytest.mark.parametrize("one_by_one", [False, True], ids=["whole", "one-by-one"])
def test_a_plan_converted_from_a_held_content_takes_its_holders_writers(
    repo: Path, tmp_path: Path, one_by_one: bool
) -> None:
    """Round 75 (r75convert): the agent's ``PLAN.json`` of a held content is converted by
    the controller's ``convert`` commit, which writes the PLAN.yml: the converted plan takes
    the content's writers as if the source's writer had committed it, carried into its
    folder (what a parent pinning it counts) as a copy's are."""
    _agent_plan_with_bobs_note(repo)
    run_once(repo)
    data = yamlio.read_yaml(PLAN, "PLAN.yml").data
    _write(repo, f"{COPY}/PLAN.json", (json.dumps(data, indent=1) + "\n").encode())
    commit_all(repo, "agent: the plan as JSON", AGENT)
    run_once(repo)  # the controller's convert commit (and its freeze)
    assert "plangate: convert" in git(repo, "log", "--format=%s", "--", COPY)
    index = _scan(repo, tmp_path, one_by_one)
    source, copy = index.plans[SOURCE], index.plans[COPY]
    assert copy.hash is not None and copy.hash == source.hash
    assert BOB_EMAIL in copy.changers
    assert BOB_EMAIL in index.authors.get(folder_key(COPY), frozenset())
