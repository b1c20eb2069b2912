"""perf83mem: the maps a cold scan builds hold one plan per key as its id alone, a set only
when several share it, and answer as the sets they replace did (issue 17: the daemon's
memory with 50,000 plans)."""

from __future__ import annotations

import shutil
from pathlib import Path

from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.git.planstate import AuthorIndex, file_key, folder_key, version_key
from controller.git.twins import FolderTwins, add_held
from tests.support.gitkit import AGENT, BOB, PLAN, commit_all, git, write_plan


def _index(tmp_path: Path) -> HistoryIndex:
    return HistoryIndex(
        tmp_path / "index.sqlite",
        plans_dir="plans",
        controller_email="plangate@localhost",
        memory=tmp_path / "memory.sqlite",
    )


def test_a_key_of_one_id_holds_the_id_and_of_two_a_set() -> None:
    by: dict[str, str | set[str]] = {}
    add_held(by, "blob", "plans/a")
    add_held(by, "blob", "plans/a")  # again: still the one id
    assert by == {"blob": "plans/a"}
    add_held(by, "blob", "plans/b")
    add_held(by, "blob", "plans/c")
    assert by == {"blob": {"plans/a", "plans/b", "plans/c"}}


def test_folder_twins_answer_for_two_plans_of_one_fold() -> None:
    twins = FolderTwins(["plans/FCASE", "plans/other", "plans/fcase"])
    assert twins._by_fold["plans/other"] == "plans/other"  # one id: the id itself
    plans = {"plans/FCASE", "plans/fcase", "plans/other"}
    assert twins.of("plans/fcase", plans) == ["plans/FCASE"]
    assert twins.of("plans/FCASE", plans) == ["plans/fcase"]
    assert twins.of("plans/Fcase", plans) == ["plans/FCASE", "plans/fcase"]  # a folder alone
    assert twins.of("plans/other", plans) == []
    assert twins.of("plans/fcase", {"plans/fcase"}) == []  # the twin gone from the plans


def test_the_author_index_is_a_mapping_of_its_keys() -> None:
    authors = AuthorIndex()
    keys = [
        folder_key("plans/a"),
        file_key("plans/a"),
        version_key("sha256:" + "0" * 64),
        "sha256:" + "1" * 64,
        folder_key("plans/a") + "@held",
        "blob:abc",
    ]
    for n, key in enumerate(keys):
        authors[key] = frozenset({f"w{n}@example.com"})
    assert sorted(authors) == sorted(keys) and len(authors) == len(keys)
    assert dict(authors) == {k: frozenset({f"w{n}@example.com"}) for n, k in enumerate(keys)}
    assert folder_key("plans/b") not in authors and authors.get(file_key("plans/b")) is None
    assert authors.get("folder:plans/a") == frozenset({"w0@example.com"})
    del authors[file_key("plans/a")]
    assert file_key("plans/a") not in authors and folder_key("plans/a") in authors


def test_two_plans_of_one_blob_both_give_their_writers_to_an_exact_copy(
    repo: Path, tmp_path: Path
) -> None:
    """Two plans hold one blob (the blob map's set), a third plan another (its id alone):
    an exact copy of the shared blob takes both sources' folder writers, after a cold scan
    and in a controller restarted on the saved index alike; the author keys it keys by a
    plan's id and hash read back equal."""
    write_plan(repo, "a")
    commit_all(repo, "a", AGENT)
    shutil.copytree(repo / "plans/a", repo / "plans/b")
    write_plan(repo, "c", text=PLAN.replace("Say hello to the world", "Say hello again"))
    commit_all(repo, "b, a copy of a by bob; c", BOB)
    first = git(repo, "rev-parse", "HEAD").strip()
    shutil.copytree(repo / "plans/a", repo / "plans/copy")
    commit_all(repo, "a copy", AGENT)
    second = git(repo, "rev-parse", "HEAD").strip()

    index = _index(tmp_path)
    index.scan(GitRepo(repo), first)
    assert index.plans["plans/a"].blob == index.plans["plans/b"].blob
    assert index._plans_holding(index.plans["plans/a"].blob or "") == ["plans/a", "plans/b"]
    assert index._plans_holding(index.plans["plans/c"].blob or "") == ["plans/c"]
    assert isinstance(index._by_blob[1][index.plans["plans/c"].blob], str)  # type: ignore[index]
    index.scan(GitRepo(repo), second)
    writers = index.authors[folder_key("plans/copy")]
    assert {AGENT[1], BOB[1]} <= writers
    plans, authors = dict(index.plans), dict(index.authors)
    index.close()

    reopened = _index(tmp_path)
    assert dict(reopened.authors) == authors and reopened.plans == plans
    state = reopened.plans["plans/a"]
    # the keys made from a plan's id and hash hold the plan's own strings
    held = reopened.authors._kinds
    assert next(k for k in held["folder"] if k == state.plan_id) is state.plan_id
    assert next(k for k in held["file"] if k == state.plan_id) is state.plan_id
    reopened.close()


def test_adopting_a_key_keeps_the_mapping_and_holds_the_given_string() -> None:
    """perf85mem: ``adopt`` re-keys an equal key by the plan's own string, nothing else."""
    authors = AuthorIndex()
    authors[folder_key("plans/a")] = frozenset({"w@example.com"})
    authors[version_key("sha256:" + "0" * 64)] = frozenset({"v@example.com"})
    before = dict(authors)
    held = "".join(["plans/", "a"])  # an equal string of its own
    plan_hash = "".join(["sha256:", "0" * 64])
    authors.adopt("folder", held)
    authors.adopt("version", plan_hash)
    authors.adopt("file", held)  # no such key: none made
    assert dict(authors) == before and file_key("plans/a") not in authors
    assert next(k for k in authors._kinds["folder"] if k == held) is held
    assert next(k for k in authors._kinds["version"] if k == plan_hash) is plan_hash


def test_shared_facts_answer_as_their_own_and_hold_repeated_strings_once() -> None:
    """perf85mem: a scan's facts of two versions share their status, digests and (equal to
    the hash) frozen hash; each still equals what the version says."""
    from controller.git.planstate import facts_of
    from controller.git.prefetch import SHARED_STRINGS, shared

    one = facts_of(PLAN.encode())
    two = facts_of(PLAN.replace("Say hello to the world", "Say hello again").encode())
    pool: dict[str, str] = {}
    a, b = shared(one, pool), shared(two, pool)
    assert (a, b) == (one, two)
    assert a.status is b.status and a.owned_digest is b.owned_digest
    assert a.execution_digest is b.execution_digest
    if a.frozen_hash == a.hash:
        assert a.frozen_hash is a.hash
    full = {str(n): str(n) for n in range(SHARED_STRINGS)}
    assert shared(one, full) == one and len(full) == SHARED_STRINGS  # a full pool grows no more


def test_a_cold_scan_keys_a_plans_folder_file_and_version_by_its_own_strings(
    repo: Path, tmp_path: Path
) -> None:
    """perf85mem: after a cold scan (before any reload), the author keys made from a plan's
    id and hash are the plan's own strings, and the twin map holds the plan's id."""
    write_plan(repo, "a")
    commit_all(repo, "a", AGENT)
    write_plan(repo, "b", text=PLAN.replace("Say hello to the world", "Say hello again"))
    commit_all(repo, "b", BOB)
    head = git(repo, "rev-parse", "HEAD").strip()
    index = _index(tmp_path)
    compact = index._compact
    seen: dict[str, bool] = {}

    def probed() -> None:  # the scan's own maps, before they are dropped and reloaded
        held = index.authors._kinds
        for state in index.plans.values():
            assert state.hash is not None
            seen[state.plan_id] = (
                next(k for k in held["folder"] if k == state.plan_id) is state.plan_id
                and next(k for k in held["file"] if k == state.plan_id) is state.plan_id
                and next(k for k in held["version"] if k == state.hash) is state.hash
            )
        compact()

    index._compact = probed  # type: ignore[method-assign]
    index.scan(GitRepo(repo), head)
    assert seen == {"plans/a": True, "plans/b": True}
    assert {AGENT[1]} <= index.authors[folder_key("plans/a")]
    assert {BOB[1]} <= index.authors[file_key("plans/b")] | index.authors[folder_key("plans/b")]
    index.close()


def test_folder_twins_discard_one_of_a_fold_and_keep_the_other() -> None:
    """perf85mem: the source finder's claimed folders are its twin map alone; a folder
    discarded is no twin and no member, its fold's other folder still both."""
    twins = FolderTwins(["plans/FCASE", "plans/fcase", "plans/other", "plans/rotate~1"])
    assert set(twins) == {"plans/FCASE", "plans/fcase", "plans/other", "plans/rotate~1"}
    assert len(twins) == 4 and "plans/fcase" in twins and "plans/nope" not in twins
    assert twins.of("plans/fcase", twins) == ["plans/FCASE"]
    twins.discard("plans/FCASE")
    assert "plans/FCASE" not in twins and "plans/fcase" in twins
    assert twins._by_fold["plans/fcase"] == "plans/fcase"  # one left: the id alone again
    assert twins.of("plans/fcase", twins) == [] and twins.of("plans/FCASE", twins) == [
        "plans/fcase"
    ]
    twins.discard("plans/fcase")
    twins.discard("plans/fcase")  # twice: nothing to do
    twins.discard("plans/rotate~1")
    assert set(twins) == {"plans/other"} and len(twins) == 1
    assert twins.of("plans/ROTATE-KEYS", twins) == []
